"""The flamingo kind through the engine's other paths: a ``bla-eval`` process killed with
SIGKILL and resumed gives the bytes of a run never stopped; a sweep cell; ``compare`` and
``export`` of its runs; the Space's list of runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.protocols.templates import get_template

from tests.bla_eval.commands import call, killed_mid_run

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]
LIMIT = 12


@pytest.fixture(scope="module")
def folder(built_dataset: Path, tiny_model) -> Path:
    from bla_eval.benchmarks.bla import load_bla

    points = [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:2]
    texts = [c for p in points for c in p.captions] + [get_template().question] * 5
    return tiny_model("openflamingo", texts)


@pytest.fixture(scope="module")
def runs(folder, built_dataset, tmp_path_factory) -> dict[str, Path]:
    """A run killed after a few datapoints and resumed, and the same run never stopped."""
    root = tmp_path_factory.mktemp("flamingo-runs")
    argv = ["--model", str(folder), "--data", str(built_dataset), "--device", "cpu"]
    argv += ["--tasks", "ap", "--limit", str(LIMIT), "--batch-size", "1", "--images-per-batch", "1"]
    killed = root / "killed"
    written = killed_mid_run(argv, killed, 3, {"OMP_NUM_THREADS": "1"})
    assert 3 <= written < LIMIT
    assert bla_eval([*argv, "--output", str(killed), "--resume"]) == 0
    assert bla_eval([*argv, "--output", str(root / "whole")]) == 0
    return {"killed": killed, "whole": root / "whole", "root": root}


def test_a_killed_run_resumed_gives_the_bytes_of_one_never_stopped(runs) -> None:
    resumed = runs["killed"] / "scores.jsonl"
    assert resumed.read_bytes() == (runs["whole"] / "scores.jsonl").read_bytes()
    results = json.loads((runs["killed"] / "results.json").read_text(encoding="utf-8"))
    whole = json.loads((runs["whole"] / "results.json").read_text(encoding="utf-8"))
    assert results["kind"] == "flamingo" and results["tasks"] == whole["tasks"]
    assert results["timings"]["datapoints_resumed"] >= 3


def test_compare_and_export_read_the_runs(runs, tmp_path, capsys) -> None:
    code, err = call(
        bla_eval,
        ["compare", str(runs["killed"]), str(runs["whole"]), "--output", str(tmp_path / "cmp")],
        capsys,
    )
    assert code == 0, err
    assert any((tmp_path / "cmp").iterdir())
    code, err = call(
        bla_eval,
        ["export", str(runs["whole"]), "--allow-partial", "--output", str(tmp_path / "export")],
        capsys,
    )
    assert code == 0, err
    assert any(p.is_file() for p in (tmp_path / "export").rglob("*"))


def test_the_space_lists_the_run(runs) -> None:
    from bla_space.results_store import list_runs, menu

    found = list_runs(runs["root"])
    assert {r.path.name for r in found} >= {"killed", "whole"}
    assert len(menu(found)) == len(found)


def test_a_sweep_cell_runs_the_kind(folder, built_dataset, tmp_path, capsys) -> None:
    plan = {
        "models": [{"name": "openflamingo", "model": str(folder)}],
        "benchmarks": [{"benchmark": "bla", "data": str(built_dataset)}],
        "protocols": ["zero-shot"],
        "options": {"tasks": ["ap"], "limit": 2, "device": "cpu"},
    }
    path = tmp_path / "plan.yaml"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, err = call(bla_eval, ["sweep", str(path), "--output", str(tmp_path / "sweep")], capsys)
    assert code == 0, err
    cells = [p for p in (tmp_path / "sweep").rglob("results.json")]
    assert len(cells) == 1
    assert json.loads(cells[0].read_text(encoding="utf-8"))["kind"] == "flamingo"
