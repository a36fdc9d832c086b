"""The analyses on a run the engine writes now (a real CLIP architecture with random weights):
guards the results.json / scores.jsonl contract between ``bla-eval`` and ``bla-eval analyze``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from bla_eval.analysis.cli import analyze_main, compare_main, export_main
from bla_eval.cli import main as bla_eval
from bla_eval.cli import main as bla_eval_main

from tests.bla_eval.commands import call, copy_run, refused, snapshot, user_folder

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.slow
def test_analyze_compare_export_a_fresh_engine_run(
    tiny_clip: Path, built_dataset: Path, tmp_path: Path, capsys
) -> None:
    run = tmp_path / "clip"
    argv = [
        "--model",
        str(tiny_clip),
        "--output",
        str(run),
        "--data",
        str(built_dataset),
        "--tasks",
        "ap,co,rc",
        "--limit",
        "30",
    ]
    assert bla_eval_main(argv) == 0
    assert analyze_main([str(run), "--examples", "1"]) == 0
    analysis = run / "analysis"
    for task in ("active_passive", "coordination", "relative_clause"):
        table = pd.read_csv(analysis / f"pairwise_{task}.csv", index_col=0)
        assert len(table) == 6 and table.iloc[:, 0].between(0, 100).all()
        coefficients = pd.read_csv(analysis / f"regression_{task}.csv", index_col=0)
        assert "avg_concreteness" in coefficients.index
    grammar = pd.read_csv(analysis / "regression_coordination.csv", index_col=0)
    assert pd.notna(grammar.loc["grammar_score", "coefficient"])  # CO/RC grammar scores used
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    capsys.readouterr()
    assert compare_main([str(run), str(copy), "--resamples", "100"]) == 0
    assert "| relative_clause | ranking | set_accuracy |" in capsys.readouterr().out
    assert export_main([str(run), "--format", "model-index", "--allow-partial"]) == 0
    assert (run / "model-index.yaml").is_file()


def _run_being_read(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    return run, run


def _users_folder(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    folder = user_folder(tmp_path / "mine")
    return folder, folder


def _users_file(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n", encoding="utf-8")
    return path, path


def _cwd(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    folder = user_folder(tmp_path / "cwd")
    os.chdir(folder)
    return Path("."), folder


OUTPUTS = {
    "the run being read": (_run_being_read, ["holds the output of `bla-eval`"]),
    "a folder of the user's": (_users_folder, ["is not empty", "thesis.tex"]),
    "a file of the user's": (_users_file, ["exists and is not a folder"]),
    "the working directory": (_cwd, ["is the working directory or holds it"]),
}


WRITERS = {
    "analyze": lambda run, data, out: ["analyze", run, "--data", data, "--output", out],
    "compare": lambda run, data, out: ["compare", run, run, "--resamples", "20", "--output", out],
    "learning-report": lambda run, data, out: ["learning-report", run, "--output", out],
}


@pytest.mark.parametrize("target", list(OUTPUTS))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_folder_outputs_replace_only_what_the_same_command_wrote(
    writer, target, co_run, learning_run, built_dataset, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    run = copy_run(learning_run if writer == "learning-report" else co_run, tmp_path)
    output, protected = OUTPUTS[target][0](tmp_path, run)
    before, listing = snapshot(protected), sorted(os.listdir(protected.parent))
    refused(bla_eval, WRITERS[writer](run, built_dataset, output), capsys, *OUTPUTS[target][1])
    assert snapshot(protected) == before
    assert sorted(os.listdir(protected.parent)) == listing  # no hidden copy, no staging left


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_folder_output_is_replaced_by_the_command_that_wrote_it(
    writer, co_run, learning_run, built_dataset, tmp_path, capsys
):
    run = copy_run(learning_run if writer == "learning-report" else co_run, tmp_path)
    out = tmp_path / "out"
    argv = WRITERS[writer](run, built_dataset, out)
    assert call(bla_eval, argv, capsys)[0] == 0
    assert call(bla_eval, argv, capsys)[0] == 0  # its own output: replaced
    (out / "mine.txt").write_text("x", encoding="utf-8")  # now it holds a file of the user's
    refused(bla_eval, argv, capsys, "did not write (mine.txt)")
