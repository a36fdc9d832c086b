"""Small copies of the authors' releases of SugarCrepe, SugarCrepe++, ARO, MMVP-VLM and
NaturalBench, each in its own layout and file format (SugarCrepe's JSON + COCO-named JPEGs,
SugarCrepe++'s JSON, ARO's JSON with boxes, MMVP's Questions.csv and image folders, NaturalBench's
parquet with embedded images), converted by the builders: the dataset repos and the texts the tiny
models are trained on, shared by this folder's test modules."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30), (30, 200, 200)]
NOUNS = ["dog", "cat", "horse", "bird", "car"]


def _jpeg(path: Path, k: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (40 + 4 * k, 32), COLOURS[k % len(COLOURS)])
    image.putpixel((k, k), (255, 255, 255))
    image.save(path, format="JPEG")


def _sources(root: Path) -> dict[str, Path]:
    """Each benchmark's release, a few items, in the authors' layout."""
    coco = root / "val2017"
    for k in range(4):
        _jpeg(coco / f"00000000000{k}.jpg", k)
    sugar = root / "sugar-crepe" / "data"
    sugar.mkdir(parents=True)
    for subset in ("replace_obj", "swap_att"):
        items = {
            str(k): {
                "filename": f"00000000000{k}.jpg",
                "caption": f"a {NOUNS[k]} next to a {NOUNS[k + 1]}",
                "negative_caption": f"a {NOUNS[k + 1]} next to a {NOUNS[k]}",
            }
            for k in range(4)
        }
        (sugar / f"{subset}.json").write_text(json.dumps(items))
    plus = root / "SugarCrepe_pp" / "data"
    plus.mkdir(parents=True)
    records = [
        {
            "id": k,
            "filename": f"00000000000{k}.jpg",
            "caption": f"a {NOUNS[k]} on a {NOUNS[k + 1]}",
            "caption2": f"on a {NOUNS[k + 1]} is a {NOUNS[k]}",
            "negative_caption": f"a {NOUNS[k]} under a {NOUNS[k + 1]}",
        }
        for k in range(4)
    ]
    (plus / "replace_rel.json").write_text(json.dumps(records))
    aro = root / "aro"
    for k in range(2):
        _jpeg(aro / "images" / f"{k}.jpg", k)
    relations = ["on", "behind", "on", "holding", "behind", "near"]
    vgr = [
        {
            "image_path": f"{k % 2}.jpg",
            "bbox_x": 1,
            "bbox_y": 2,
            "bbox_w": 20 + k,
            "bbox_h": 16,
            "relation_name": relation,
            "true_caption": f"the {NOUNS[k % 4]} is {relation} the {NOUNS[k % 4 + 1]}",
            "false_caption": f"the {NOUNS[k % 4 + 1]} is {relation} the {NOUNS[k % 4]}",
        }
        for k, relation in enumerate(relations)
    ]
    (aro / "visual_genome_relation.json").write_text(json.dumps(vgr))
    mmvp = root / "MMVP_VLM"
    mmvp.mkdir()
    rows = [["Question ID", "Type", "Statement"]]
    for qid in range(1, 7):
        kind = "Orientation" if qid <= 4 else "Color"
        rows.append(
            [str(qid), kind, f"the {NOUNS[qid % 5]} faces {'left' if qid % 2 else 'right'}"]
        )
        _jpeg(mmvp / "MLLM_VLM Images" / kind / f"{qid}.jpg", qid)
    with (mmvp / "Questions.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return {"coco": coco, "sugar": sugar, "plus": plus, "aro": aro, "mmvp": mmvp}


def _naturalbench(root: Path) -> Path:
    """BaiqiL/NaturalBench's parquet layout: embedded images, ``Question Type``."""
    import datasets
    from PIL import Image

    def png(k: int) -> dict:
        buffer = io.BytesIO()
        Image.new("RGB", (32, 32), COLOURS[k % 5]).save(buffer, format="PNG")
        return {"bytes": buffer.getvalue(), "path": None}

    rows = {
        name: []
        for name in (
            "Index",
            "Image_0",
            "Image_1",
            "Question_0",
            "Image_0_Question_0",
            "Image_1_Question_0",
            "Question_1",
            "Image_0_Question_1",
            "Image_1_Question_1",
            "Question Type",
            "Source",
        )
    }
    for k in range(4):
        kind = "multiple_choice" if k == 3 else "yes_no"
        values = [
            k,
            png(k),
            png(k + 1),
            f"Is the {NOUNS[k]} red?",
            "Yes",
            "No",
            f"Is the {NOUNS[k]} blue?",
            "No",
            "Yes",
            kind,
            "flickr",
        ]
        if kind == "multiple_choice":
            values[4:9] = ["A", "B", "Which? A. x B. y", "B", "A"]
        for name, value in zip(rows, values, strict=True):
            rows[name].append(value)
    features = datasets.Features(
        {
            name: datasets.Image()
            if name.startswith("Image_") and "Question" not in name
            else datasets.Value("int64" if name == "Index" else "string")
            for name in rows
        }
    )
    folder = root / "NaturalBench"
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(rows, features=features).to_parquet(
        folder / "data" / "train-00000-of-00001.parquet"
    )
    return folder


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, Path]:
    """Each benchmark's dataset repo, built by ``python -m builders <name>``."""
    from builders.__main__ import main as builders_main

    root = tmp_path_factory.mktemp("neighbours")
    src = _sources(root)
    nb = _naturalbench(root)
    out = {
        name: root / f"{name}_repo"
        for name in ("sugarcrepe", "sugarcrepe-pp", "aro", "mmvp-vlm", "naturalbench")
    }
    commands = {
        "sugarcrepe": ["--annotations", src["sugar"], "--images", src["coco"]],
        "sugarcrepe-pp": ["--annotations", src["plus"], "--images", src["coco"]],
        "aro": ["--annotations", src["aro"], "--images", src["aro"] / "images"],
        "mmvp-vlm": ["--source", src["mmvp"]],
        "naturalbench": ["--source", nb],
    }
    for name, args in commands.items():
        argv = [name, *(str(a) for a in args), "--out", str(out[name])]
        assert builders_main(argv) == 0, name
    return out


@pytest.fixture(scope="module")
def texts(repos) -> list[str]:
    """Every text the models score (their tokenizers are trained on them)."""
    from bla_eval.benchmarks import get_benchmark, load_items
    from bla_eval.protocols.templates import get_template

    found = set()
    for name, repo in repos.items():
        bench = get_benchmark(name)
        tasks = [t for t in bench.task_names() if (repo / "data" / t).is_dir()]
        found |= {c for item in load_items(bench, str(repo), tasks) for c in item.captions}
    found |= {get_template().question.format(sentence="x"), "yes", "no", "Yes", "No"}
    return sorted(found)
