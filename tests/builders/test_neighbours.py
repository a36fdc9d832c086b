"""VALSE, VL-CheckList and Winoground: builders on the real annotations and images, then
``bla-eval`` with a tiny random CLIP, metrics recomputed here from ``scores.jsonl``.

Real data: ``../shared/data/valse`` (its Visual7W items on the BLA release's Visual Genome
images), ``../shared/data/vl-checklist`` (5,327 items on the same images). Winoground is gated:
a small ``examples.jsonl`` in the Hub release's layout with images this test draws.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bla_metric.neighbours.vl_checklist import (
    VL_CHECKLIST_CORPUS,
    VL_CHECKLIST_LEAVES,
    vl_checklist_rollup,
)
from builders import valse as valse_builder
from builders import vl_checklist as vlc_builder
from builders import winoground as wino_builder
from builders.__main__ import main as builders_main

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
VALSE_DIR = SHARED / "valse"
VLC_DIR = SHARED / "vl-checklist"
VG_IMAGES = SHARED / "BLA_Benchmark" / "images"
VALSE_CONFIGS = ("existence", "counting_hard", "counting_small_quant", "counting_adversarial")


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]


def _bla_eval(*argv: str) -> dict:
    from bla_eval.cli import main

    out = Path(argv[argv.index("--output") + 1])
    assert main([*argv, "--device", "cpu"]) == 0
    return json.loads((out / "results.json").read_text())


# ----------------------------------------------------------------------------- expected counts


def _valse_expected() -> dict[str, dict[str, int]]:
    """Per instrument, from the annotations: held (validated, image present), missing, rejected."""
    out = {}
    for path in sorted(VALSE_DIR.glob("*.json")):
        counts = Counter()
        for record in json.loads(path.read_text()).values():
            if record["mturk"]["caption"] < 2:
                counts["not validated"] += 1
                continue
            name = record["image_file"]
            vg = name[4:] if name.startswith("v7w_") else None
            counts["held" if vg and (VG_IMAGES / vg).is_file() else "missing"] += 1
        out[path.stem.replace("-", "_")] = dict(counts)
    return out


def _vlc_expected(available: set[str]) -> dict[str, tuple[int, int]]:
    """Per leaf, from corpus.json and the annotation files: (held, missing) for these images."""
    files = {p.relative_to(VLC_DIR).as_posix(): p for p in VLC_DIR.glob("data/**/*.json")}
    out = {}
    for config, (key, _) in VL_CHECKLIST_LEAVES.items():
        held = missing = 0
        seen = False
        for corpora in VL_CHECKLIST_CORPUS[key].values():
            for corpus in corpora:
                rel = vlc_builder.corpus_file(corpus).as_posix()
                if rel in files:
                    seen = True
                    for image_path, _texts in json.loads(files[rel].read_text()):
                        if Path(image_path).name in available:
                            held += 1
                        else:
                            missing += 1
        if seen:
            out[config] = (held, missing)
    return out


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def valse_repo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("valse") / "repo"
    valse_builder.build_valse(VALSE_DIR, [VG_IMAGES], out)
    return out


@pytest.fixture(scope="module")
def vlc_repo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vlc") / "repo"
    vlc_builder.build_vl_checklist(VLC_DIR, [VG_IMAGES], out)
    return out


def _draw(path: Path, colour: tuple[int, int, int], shape: str) -> None:
    image = Image.new("RGB", (48, 40), colour)
    for x in range(8, 24):
        for y in range(8, 24) if shape == "square" else range(16, 18):
            image.putpixel((x, y), (255 - colour[0], 255 - colour[1], 255 - colour[2]))
    image.save(path)


WINO_EXAMPLES = [
    {
        "id": 0,
        "image_0": "ex_0_img_0",
        "image_1": "ex_0_img_1",
        "caption_0": "an old person kisses a young person",
        "caption_1": "a young person kisses an old person",
        "tag": "Adjective-Age",
        "secondary_tag": "",
        "num_main_preds": 1,
        "collapsed_tag": "Object",
    },
    {
        "id": 1,
        "image_0": "ex_1_img_0",
        "image_1": "ex_1_img_1",
        "caption_0": "the red square is left of the blue line",
        "caption_1": "the blue square is left of the red line",
        "tag": "Adjective-Color",
        "secondary_tag": "Symbolic",
        "num_main_preds": 1,
        "collapsed_tag": "Object",
    },
    {
        "id": 2,
        "image_0": "ex_2_img_0",
        "image_1": "ex_2_img_1",
        "caption_0": "the dog chases the cat",
        "caption_1": "the cat chases the dog",
        "tag": "Noun",
        "secondary_tag": "",
        "num_main_preds": 1,
        "collapsed_tag": "Relation",
    },
    {
        "id": 3,
        "image_0": "ex_3_img_0",
        "image_1": "ex_3_img_1",
        "caption_0": "a person sits and a dog stands",
        "caption_1": "a person stands and a dog sits",
        "tag": "Verb",
        "secondary_tag": "",
        "num_main_preds": 2,
        "collapsed_tag": "Both",
    },
]


@pytest.fixture(scope="module")
def winoground_release(tmp_path_factory) -> tuple[Path, Path]:
    """examples.jsonl in the Hub layout and images/ as unpacked from images.zip; the image
    ex_3_img_1 is missing on purpose."""
    root = tmp_path_factory.mktemp("winoground")
    images = root / "images"
    images.mkdir()
    rng = np.random.default_rng(0)
    for example in WINO_EXAMPLES:
        for k, shape in (("image_0", "square"), ("image_1", "line")):
            if example[k] != "ex_3_img_1":
                _draw(
                    images / f"{example[k]}.png",
                    tuple(int(c) for c in rng.integers(0, 255, 3)),
                    shape,
                )
    examples = root / "examples.jsonl"
    examples.write_text("".join(json.dumps(e) + "\n" for e in WINO_EXAMPLES))
    return examples, images


@pytest.fixture(scope="module")
def winoground_repo(winoground_release, tmp_path_factory) -> Path:
    examples, images = winoground_release
    out = tmp_path_factory.mktemp("wino") / "repo"
    wino_builder.build_winoground(examples, images, out)
    return out


@pytest.fixture(scope="module")
def neighbours_clip(valse_repo, vlc_repo, tiny_model) -> Path:
    """A real CLIP architecture with random weights, tokenizer trained on every text scored."""
    import pyarrow.parquet as pq
    from bla_eval.testing.dual_encoders import save_random_clip, tiny_clip_config

    texts = [c for e in WINO_EXAMPLES for c in (e["caption_0"], e["caption_1"])]
    for repo in (valse_repo, vlc_repo):
        for path in sorted(repo.glob("data/*/test-*.parquet")):
            captions = pq.read_table(path, columns=["captions"]).column("captions")
            texts += [c for row in captions.to_pylist() for c in row]
    return tiny_model(
        "clip-neighbours",
        sorted(set(texts)),
        lambda folder, texts: save_random_clip(folder, texts, tiny_clip_config()),
    )


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    """One folder for every run of this module (the Space lists them from there)."""
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def valse_run(valse_repo, neighbours_clip, runs_dir) -> tuple[Path, dict]:
    out = runs_dir / "valse"
    return out, _bla_eval(
        "--benchmark",
        "valse",
        "--data",
        str(valse_repo),
        "--model",
        str(neighbours_clip),
        "--output",
        str(out),
        "--tasks",
        *VALSE_CONFIGS,
    )


@pytest.fixture(scope="module")
def vlc_run(vlc_repo, neighbours_clip, runs_dir) -> tuple[Path, dict]:
    out = runs_dir / "vlc"
    return out, _bla_eval(
        "--benchmark",
        "vl-checklist",
        "--data",
        str(vlc_repo),
        "--model",
        str(neighbours_clip),
        "--output",
        str(out),
    )


@pytest.fixture(scope="module")
def wino_run(winoground_repo, neighbours_clip, runs_dir) -> tuple[Path, dict, str]:
    import contextlib
    import io

    out = runs_dir / "wino"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        results = _bla_eval(
            "--benchmark",
            "winoground",
            "--data",
            str(winoground_repo),
            "--model",
            str(neighbours_clip),
            "--output",
            str(out),
        )
    return out, results, printed.getvalue()


# ----------------------------------------------------------------------------- builders


def test_valse_build_counts_and_rows(valse_repo):
    manifest = json.loads((valse_repo / "manifest.json").read_text())
    expected = _valse_expected()
    assert manifest["builder"] == "python -m builders valse"
    assert manifest["configs"] == {c: {"test": expected[c]["held"]} for c in VALSE_CONFIGS}
    assert sum(expected[c]["held"] for c in VALSE_CONFIGS) == 39  # of the 42 Visual7W items
    for config, counts in expected.items():
        assert manifest["left_out"][config] == {
            "missing_images": counts.get("missing", 0),
            "not validated": counts["not validated"],
        }
    card = (valse_repo / "README.md").read_text()
    assert "| `existence` (Existence (quantifiers)) | 8 | 497 | 29 |" in card
    assert "| `plurals` (Plurality (semantic number)) | 0 | 851 | 149 |" in card

    import datasets

    ds = datasets.load_dataset(str(valse_repo), "existence", split="test")
    row = ds[0]
    source = json.loads((VALSE_DIR / "existence.json").read_text())[row["id"]]
    assert row["captions"] == [source["caption"], source["foil"]]
    assert row["labels"] == [1, 0] and row["validated"]
    assert row["image"].size == Image.open(VG_IMAGES / source["image_file"][4:]).size
    assert json.loads(row["metadata"])["provenance_of_foils"] == source["provenance_of_foils"]


def test_valse_rebuild_is_byte_identical_and_errors_leave_out_alone(valse_repo, tmp_path, capsys):
    again = tmp_path / "again"
    valse_builder.build_valse(VALSE_DIR, [VG_IMAGES], again)
    first = json.loads((valse_repo / "manifest.json").read_text())["files"]
    assert json.loads((again / "manifest.json").read_text())["files"] == first
    valse_builder.build_valse(VALSE_DIR, [VG_IMAGES], again)  # a build of ours is replaced
    assert json.loads((again / "manifest.json").read_text())["files"] == first

    broken = tmp_path / "broken"
    broken.mkdir()
    for path in VALSE_DIR.glob("*.json"):
        (broken / path.name).symlink_to(path)
    (broken / "relations.json").unlink()
    (broken / "relations.json").write_text('{"relations:1": {"caption": "a", "foil": "b"}}')
    code = builders_main(
        ["valse", "--annotations", str(broken), "--images", str(VG_IMAGES), "--out", str(again)]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == (
        f"python -m builders valse: error: {broken / 'relations.json'} record 'relations:1': "
        "'image_file' must be a non-empty string"
    )
    assert json.loads((again / "manifest.json").read_text())["files"] == first  # untouched


def test_valse_all_candidates_keeps_rejected_items(tmp_path):
    _, configs = valse_builder.build_valse(
        VALSE_DIR, [VG_IMAGES], tmp_path / "all", all_candidates=True
    )
    small = json.loads((VALSE_DIR / "counting-small-quant.json").read_text())
    with_image = [r for r in small.values() if (VG_IMAGES / r["image_file"][4:]).is_file()]
    rows = configs["counting_small_quant"].rows
    assert len(rows) == len(with_image) == 7  # 4 validated, 3 rejected
    assert (
        sum(not r["validated"] for r in rows)
        == sum(r["mturk"]["caption"] < 2 for r in with_image)
        == 3
    )
    assert configs["counting_small_quant"].left_out == {}


def test_vl_checklist_build_counts_every_leaf(vlc_repo):
    manifest = json.loads((vlc_repo / "manifest.json").read_text())
    expected = _vlc_expected({p.name for p in VG_IMAGES.iterdir()})
    assert {c: v["test"] for c, v in manifest["configs"].items()} == {
        c: held for c, (held, _) in expected.items()
    }
    assert sum(v["test"] for v in manifest["configs"].values()) == 5327
    assert len(manifest["configs"]) == 13  # every taxonomy leaf has items on BLA's images
    assert all(v == {"missing_images": 0} for v in manifest["left_out"].values())
    sources = manifest["source_files"]  # named as in the release, never by this machine's paths
    assert "annotations/data/Relation/vg/spatial.json" in sources
    first_image = json.loads((VLC_DIR / "data/Relation/vg/spatial.json").read_text())[0][0]
    assert f"images/vg/{first_image}" in sources
    assert not [k for k in sources if str(SHARED) in k or k.startswith("/")]


def test_vl_checklist_missing_images_are_counted_per_leaf(tmp_path, capsys):
    # two leaves' files (Relation) with an upstream image root (vg/VG_100K*/<id>.jpg) that
    # holds only every other image
    annotations = tmp_path / "vl-checklist"
    (annotations / "data" / "Relation").mkdir(parents=True)
    (annotations / "data" / "Relation" / "vg").symlink_to(VLC_DIR / "data" / "Relation" / "vg")
    (annotations / "vl_checklist").mkdir()  # where the upstream repository keeps it
    (annotations / "vl_checklist" / "corpus.json").symlink_to(VLC_DIR / "corpus.json")
    items = [
        item
        for f in sorted((VLC_DIR / "data" / "Relation" / "vg").glob("*.json"))
        for item in json.loads(f.read_text())
    ]
    names = sorted({Path(p).name for p, _ in items})
    kept = set(names[::2])
    root = tmp_path / "images"
    for image_path in {p for p, _ in items if Path(p).name in kept}:
        target = root / "vg" / image_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(VG_IMAGES / Path(image_path).name, target)  # a link out is refused
    out = tmp_path / "repo"
    assert (
        builders_main(
            [
                "vl-checklist",
                "--annotations",
                str(annotations),
                "--images",
                str(root),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    expected = {}
    for config in ("relation_action", "relation_spatial"):
        rows = json.loads(
            (VLC_DIR / "data" / "Relation" / "vg" / f"{config.split('_')[1]}.json").read_text()
        )
        held = sum(Path(p).name in kept for p, _ in rows)
        expected[config] = (held, len(rows) - held)
    assert {
        c: (v["test"], manifest["left_out"][c]["missing_images"])
        for c, v in manifest["configs"].items()
    } == expected
    assert all(held > 0 and missing > 0 for held, missing in expected.values())
    assert "annotations/vl_checklist/corpus.json" in manifest["source_files"]
    printed = capsys.readouterr().out
    held, missing = expected["relation_spatial"]
    assert f"relation_spatial: {held} items, {missing} image(s) missing" in printed


def test_winoground_build(winoground_repo, winoground_release, capsys):
    import datasets

    manifest = json.loads((winoground_repo / "manifest.json").read_text())
    assert manifest["configs"] == {"winoground": {"test": 3}}
    assert manifest["left_out"] == {"winoground": {"missing_images": 1}}
    ds = datasets.load_dataset(str(winoground_repo), "winoground", split="test")
    assert ds["id"] == ["0", "1", "2"]
    assert ds[1]["caption_1"] == WINO_EXAMPLES[1]["caption_1"]
    assert ds[1]["image_0"].size == (48, 40) and ds[2]["collapsed_tag"] == "Relation"

    examples, images = winoground_release
    capsys.readouterr()
    bad = examples.parent / "bad.jsonl"
    bad.write_text(json.dumps(WINO_EXAMPLES[0]) + "\n{not json\n")
    code = builders_main(
        [
            "winoground",
            "--examples",
            str(bad),
            "--images",
            str(images),
            "--out",
            str(examples.parent / "x"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m builders winoground: error: {bad} line 2: not valid JSON")

    latin = examples.parent / "latin.jsonl"
    latin.write_bytes(b"\xff" + json.dumps(WINO_EXAMPLES[0]).encode() + b"\n")
    argv = ["winoground", "--examples", str(latin), "--images", str(images)]
    assert builders_main([*argv, "--out", str(examples.parent / "y")]) == 2
    err = capsys.readouterr().err
    assert err == f"python -m builders winoground: error: {latin}: not UTF-8 text (byte 1)\n"
    assert not (examples.parent / "y").exists()


# ----------------------------------------------------------------------------- engine


def _auroc_by_pairs(pos: list[float], neg: list[float]) -> float:
    return float(
        np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)])
    )


def test_valse_through_bla_eval(valse_run):
    out, results = valse_run
    assert results["benchmark"] == "valse"
    assert list(results["tasks"]) == list(VALSE_CONFIGS)
    records = _records(out)
    assert len(records) == 39
    for config in VALSE_CONFIGS:
        rows = [r for r in records if r["task"] == config]
        assert all(r["labels"] == [1, 0] and len(r["scores"]) == 2 for r in rows)
        got = results["tasks"][config]
        assert got["n"] == len(rows)
        assert got["pairwise"]["acc_r"] == pytest.approx(
            np.mean([r["scores"][0] > r["scores"][1] for r in rows])
        )
        assert got["pairwise"]["auroc"] == pytest.approx(
            _auroc_by_pairs([r["scores"][0] for r in rows], [r["scores"][1] for r in rows])
        )
        assert got["pairwise"]["ties"] == sum(r["scores"][0] == r["scores"][1] for r in rows)
        assert "binary" not in got  # contrastive scores: acc_r and AUROC only (as CLIP in VALSE)


def test_valse_binary_view_of_an_itm_model(valse_repo, tiny_model, tmp_path):
    """A probabilistic kind (BLIP ITM head, tiny, random): acc / p_c / p_f / min at 0.5."""
    from bla_eval.testing.itm import build_blip_itm

    texts = [
        c
        for path in sorted(VALSE_DIR.glob("*.json"))
        for r in json.loads(path.read_text()).values()
        if r["image_file"].startswith("v7w_")
        for c in (r["caption"], r["foil"])
    ]
    blip = tiny_model("blip_itm", texts, build_blip_itm)
    out = tmp_path / "run"
    results = _bla_eval(
        "--benchmark",
        "valse",
        "--data",
        str(valse_repo),
        "--model",
        str(blip),
        "--output",
        str(out),
        "--tasks",
        "counting_hard",
    )
    assert results["kind"] == "itm"
    rows = _records(out)
    captions = [r["scores"][0] >= 0.5 for r in rows]  # judged matching
    foils = [r["scores"][1] < 0.5 for r in rows]  # judged not matching
    p_c, p_f = np.mean(captions), np.mean(foils)
    assert results["tasks"]["counting_hard"]["binary"] == pytest.approx(
        {
            "accuracy": (sum(captions) + sum(foils)) / (2 * len(rows)),
            "p_c": p_c,
            "p_f": p_f,
            "min_p_c_p_f": min(p_c, p_f),
        }
    )


@pytest.mark.slow
def test_vl_checklist_through_bla_eval(vlc_run):
    out, results = vlc_run
    assert results["benchmark"] == "vl-checklist"
    assert list(results["tasks"]) == list(VL_CHECKLIST_LEAVES)
    records = _records(out)
    assert len(records) == 5327
    leaves = {}
    for config, (key, _) in VL_CHECKLIST_LEAVES.items():
        rows = [r for r in records if r["task"] == config]
        per_file: dict[str, list[bool]] = {}
        for r in rows:
            per_file.setdefault(r["id"].rsplit("-", 1)[0], []).append(
                r["scores"][0] > r["scores"][1]
            )
        by_source = [
            [np.mean(per_file[c]) for c in corpora if c in per_file]
            for corpora in VL_CHECKLIST_CORPUS[key].values()
        ]
        expected = np.mean([np.mean(s) for s in by_source if s])
        got = results["tasks"][config]["accuracy"]
        assert got["accuracy"] == pytest.approx(expected)
        assert got["pooled_accuracy"] == pytest.approx(
            np.mean([r["scores"][0] > r["scores"][1] for r in rows])
        )
        leaves[config] = expected
    rollup = vl_checklist_rollup(leaves)
    objects = [leaves[c] for c in VL_CHECKLIST_LEAVES if c.startswith("object_")]
    assert rollup["Object"] == pytest.approx(np.mean(objects))  # 3 size + 3 location leaves
    from bla_eval.benchmarks.vl_checklist import rollup as results_rollup

    assert results_rollup(results) == pytest.approx(rollup)


@pytest.mark.parametrize("option", [["--control", "shuffled"], ["--control", "blank"]])
def test_winoground_refuses_a_control_before_the_model_loads(
    option, winoground_repo, runs_dir, capsys
):
    from bla_eval.cli import main

    out = runs_dir / "wino-control"
    argv = ["--benchmark", "winoground", "--data", str(winoground_repo), "--output", str(out)]
    code = main([*argv, "--model", str(runs_dir / "no-such-model"), *option])
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert code == 2 and len(errors) == 1, errors  # beside the datasets progress bar
    assert errors[0].startswith(f"bla-eval: error: {option[0]}: the datapoints of winoground ")
    assert not out.exists()


def test_winoground_end_to_end(wino_run):
    out, results, table = wino_run
    assert results["benchmark"] == "winoground"
    records = _records(out)
    assert [r["id"] for r in records] == ["0", "1", "2"]
    text = image = group = 0
    for r in records:
        (s00, s01), (s10, s11) = r["scores"]  # [image][caption]
        assert r["labels"] == [[1, 0], [0, 1]]
        t = s00 > s01 and s11 > s10  # each image prefers its own caption
        i = s00 > s10 and s11 > s01  # each caption prefers its own image
        text, image, group = text + t, image + i, group + (t and i)
    got = results["tasks"]["winoground"]["scores"]
    assert got == {
        "text_score": text / 3,
        "image_score": image / 3,
        "group_score": group / 3,
        "n": 3,
    }
    assert "Winoground (%): text / image / group score" in table
    assert "| CLIP (ViT-B/32) (Winoground paper Table 3) | 30.75 / 10.50 / 8.00 |" in table


# ----------------------------------------------------------------------------- Space


def test_space_browses_items_with_scores_and_one_leaderboard_per_benchmark(
    valse_run, vlc_run, wino_run, runs_dir
):
    import gradio as gr
    from bla_space import neighbours as space
    from bla_space.config import SpaceConfig

    config = SpaceConfig(dataset="unused", results_dir=runs_dir)
    assert [name for _, name in space.run_choices(config, "winoground")] == ["", "wino"]
    assert [name for _, name in space.run_choices(config, "valse")] == ["", "valse"]
    assert space.dataset_for("valse", None, env={}) is None  # no run, no BLA_VALSE_DATASET

    # a VALSE item: image, caption and foil with the run's scores
    out, results = valse_run
    record = _records(out)[0]
    first, second, header, table = space.show_item(
        "valse", space.dataset_for("valse", results), record["task"], str(out), 1
    )
    assert first.size[0] > 100 and second is None
    assert record["id"] in header and "instrument existence" in header
    assert table["role"].tolist() == ["caption", "foil"]
    assert table["score"].tolist() == [round(s, 6) for s in record["scores"]]
    ok = record["scores"][0] > record["scores"][1]
    assert ("✓" in header) == ok

    # a Winoground item: two images, a 2x2 score table, text / image / group verdicts
    out, results, _ = wino_run
    record = _records(out)[1]
    first, second, header, table = space.show_item(
        "winoground", space.dataset_for("winoground", results), "winoground", str(out), 2
    )
    assert first.size == second.size == (48, 40)
    (s00, s01), (s10, s11) = record["scores"]
    assert table.values.tolist() == [
        [f"0: {WINO_EXAMPLES[1]['caption_0']}", round(s00, 6), round(s10, 6)],
        [f"1: {WINO_EXAMPLES[1]['caption_1']}", round(s01, 6), round(s11, 6)],
    ]
    text_ok = s00 > s01 and s11 > s10
    assert f"text {'✓' if text_ok else '✗'}" in header

    # leaderboards: published rows and this Space's run, one table per view
    boards = space.leaderboards(config, "winoground")
    board = boards["scores"]
    clip = board[board["model"] == "CLIP (ViT-B/32)"].iloc[0]
    assert clip["winoground group_score"] == 8.0
    run_row = board[board["source"].str.startswith("Space run")].iloc[0]
    assert run_row["winoground text_score"] == round(
        100 * results["tasks"]["winoground"]["scores"]["text_score"], 2
    )
    assert set(space.leaderboards(config, "valse")) == {"pairwise", "binary"}
    vlc = space.leaderboards(config, "vl-checklist")
    assert "Relation/Spatial acc" in vlc["accuracy"].columns
    categories = vlc["categories"]
    clip = categories[categories["model"] == "CLIP"].iloc[0]
    assert clip[["Object", "Attribute", "Relation", "overall"]].tolist() == [
        82.83,
        67.93,
        64.19,
        71.65,
    ]  # paper Table 2
    from bla_eval.benchmarks.vl_checklist import rollup

    mine = categories[categories["source"].str.startswith("Space run")].iloc[0]
    assert mine["overall"] == round(100 * rollup(vlc_run[1])["overall"], 2)

    from bla_space.ui import build_demo

    demo = build_demo(config)
    assert isinstance(demo, gr.Blocks)
    tabs = [b for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    assert "VALSE · VL-CheckList · Winoground" in [t.label for t in tabs]
