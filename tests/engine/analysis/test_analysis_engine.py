"""The analyses on a run the engine writes now (a real CLIP architecture with random weights):
guards the results.json / scores.jsonl contract between ``bla-eval`` and ``bla-eval analyze``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
from bla_eval.analysis.cli import analyze_main, compare_main, export_main
from bla_eval.cli import main as bla_eval_main


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
    assert export_main([str(run)]) == 0
    assert (run / ".eval_results" / "bla.yaml").is_file()
