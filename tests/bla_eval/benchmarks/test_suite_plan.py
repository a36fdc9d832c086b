"""``docs/suite-plan.yaml`` run end to end by ``bla-eval sweep``: every benchmark it names (BLA,
VALSE, VL-CheckList, Winoground, SugarCrepe, SugarCrepe++, ARO, MMVP-VLM) scored by a tiny CLIP
and by the plan's blind row (a text-only model), each benchmark's leaderboard ranking both. The
plan's own benchmarks and protocol are kept; only its models and data folders are this test's.
BLA is the real release's build, the others small copies in their authors' layouts (VALSE,
VL-CheckList and Winoground on images of the BLA release)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]


def _neighbours(release_dir: Path, root: Path) -> dict[str, list]:
    """VALSE, VL-CheckList and Winoground sources, two items each, on images of the BLA release:
    the builders' arguments."""
    from builders import vl_checklist

    ids = sorted(p.stem for p in (release_dir / "images").iterdir())[:4]
    valse = root / "valse"
    valse.mkdir(parents=True)
    records = {
        str(k): {
            "caption": caption,
            "foil": foil,
            "image_file": f"v7w_{ids[k]}.jpg",
            "mturk": {"caption": 3, "foil": 0, "other": 0},
        }
        for k, (caption, foil) in enumerate(
            [("A man rides a horse.", "A horse rides a man."), ("Two dogs.", "One dog.")]
        )
    }
    (valse / "existence.json").write_text(json.dumps(records))
    corpus = root / "vlc" / vl_checklist.corpus_file("Object_Size_large_vg_obj")
    corpus.parent.mkdir(parents=True)
    items = [
        [f"VG_100K/{ids[k]}.jpg", {"POS": [f"a large {noun}"], "NEG": [f"a small {noun}"]}]
        for k, noun in enumerate(["dog", "tree"])
    ]
    corpus.write_text(json.dumps(items))
    examples, images = _winoground(ids, release_dir, root / "wino")
    flat = ["--images", release_dir / "images"]
    return {
        "valse": ["--annotations", valse, *flat],
        "vl-checklist": ["--annotations", root / "vlc", *flat],
        "winoground": ["--examples", examples, "--images", images],
    }


def _winoground(ids: list[str], release_dir: Path, root: Path) -> tuple[Path, Path]:
    """Two Winoground examples in the release's layout."""
    images = root / "images"
    images.mkdir(parents=True)
    lines = []
    for k in range(2):
        for j in range(2):
            shutil.copy(
                release_dir / "images" / f"{ids[2 * k + j]}.jpg", images / f"ex_{k}_img_{j}.jpg"
            )
        example = {"id": k, "image_0": f"ex_{k}_img_0", "image_1": f"ex_{k}_img_1"}
        example |= {"caption_0": "a dog chases a cat", "caption_1": "a cat chases a dog"}
        lines.append(json.dumps(example))
    (root / "examples.jsonl").write_text("\n".join(lines) + "\n")
    return root / "examples.jsonl", images


def test_the_suite_plan_ranks_every_benchmark_with_its_blind_row(
    repos, texts, built_dataset, release_dir, tiny_model, tmp_path
) -> None:
    from bla_eval.benchmarks import get_benchmark
    from bla_eval.cli import main as bla_eval
    from bla_eval.testing.generative import build_llama_text

    from builders.__main__ import main as builders_main

    built = {name: str(path) for name, path in repos.items()}
    for name, args in _neighbours(release_dir, tmp_path / "sources").items():
        built[name] = str(tmp_path / name)
        assert builders_main([name, *map(str, args), "--out", built[name]]) == 0, name
    built["bla"] = str(built_dataset)

    plan = yaml.safe_load((ROOT / "docs" / "suite-plan.yaml").read_text())
    blind = [m for m in plan["models"] if m.get("kind") == "text"]
    assert len(blind) == 1  # the plan's blind row
    llama = tiny_model("llama_text", texts, build_llama_text)
    plan["models"] = [
        {"name": "clip", "model": str(tiny_model("clip", texts))},
        {**blind[0], "model": str(llama)},
    ]
    names = []
    for k, entry in enumerate(plan["benchmarks"]):
        entry = {"benchmark": entry} if isinstance(entry, str) else dict(entry)
        name = entry["benchmark"]
        data = Path(built[name]) / "data"
        held = [t for t in get_benchmark(name).task_names() if (data / t).is_dir()]
        plan["benchmarks"][k] = {**entry, "data": built[name], "tasks": held}
        names.append(name)
    plan["options"] = {**plan.get("options", {}), "limit": 2}
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(plan))

    out = tmp_path / "sweep"
    argv = ["sweep", str(tmp_path / "plan.yaml"), "--output", str(out), "--resamples", "50"]
    assert bla_eval([*argv, "--quiet"]) == 0
    # every benchmark of the suite is in the plan (NaturalBench, for models with P(yes), in a
    # comment of its own)
    assert set(names) == set(built) - {"naturalbench"}
    assert "# - {benchmark: naturalbench" in (ROOT / "docs" / "suite-plan.yaml").read_text()
    for name in names:
        board = json.loads((out / "leaderboards" / name / "zero-shot" / "compare.json").read_text())
        assert [Path(run).name for run in board["runs"]] == ["clip", blind[0]["name"]], name
        assert board["leaderboard"], name  # a ranked table per task
        blind_run = out / name / "zero-shot" / blind[0]["name"] / "results.json"
        assert json.loads(blind_run.read_text())["kind"] == "text", name
