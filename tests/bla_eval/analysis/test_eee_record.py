"""`bla-eval export` writes an Every Eval Ever record per run: valid under the package's own
schema (``every_eval_ever/schemas/eval.schema.json`` of its 0.3.0 wheel, ``.ci/wheels/``),
carrying the run's numbers with standard error, interval, n and resamples, linked from the
entries."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from bla_eval.analysis.cli import export_main
from bla_eval.analysis.eee_record import RECORD_FILE
from bla_eval.analysis.export import check_repo_id
from bla_eval.harnesses.answer_match import RESAMPLES, answer_accuracy, answer_interval
from bla_eval.runs import RESULTS_FILE, SCORES_FILE
from huggingface_hub import parse_eval_result_entries

from bla_metric import formulas
from bla_metric.stats.uncertainty import ratio_standard_error
from tests.bla_eval.analysis.test_export import answered_run
from tests.bla_eval.commands import lines_of, refused
from tests.harness_envs import harness_wheel

pytestmark = pytest.mark.usefixtures("one_thread")

SCHEMA = "every_eval_ever/schemas/eval.schema.json"
"""The record's schema inside the package's wheel."""


def _validator():
    from jsonschema import Draft7Validator

    with zipfile.ZipFile(harness_wheel("every-eval-ever")) as wheel:
        schema = json.loads(wheel.read(SCHEMA).decode("utf-8"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def test_the_record_validates_and_carries_the_runs_numbers(tmp_path: Path, capsys) -> None:
    run = answered_run(tmp_path)
    out = tmp_path / "repo"
    argv = [str(run), "--output", str(out), "--repo-id", "me/model"]
    assert export_main([*argv, "--source-url", "https://example.org/logs"]) == 0
    record = json.loads((out / ".eval_results" / RECORD_FILE).read_text())
    errors = [e.message for e in _validator().iter_errors(record)]
    assert errors == []
    results = json.loads((run / RESULTS_FILE).read_text())
    records = lines_of(run / SCORES_FILE)
    assert record["model_info"]["id"] == results["model"]
    assert record["evaluation_timestamp"] == results["created"]
    assert record["source_metadata"]["additional_details"]["logs"] == "https://example.org/logs"
    by_id = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}
    assert len(by_id) == 2 * len(results["tasks"])
    for task in results["tasks"]:
        held = [r for r in records if r["task"] == task]
        answers, labels = [r["answers"] for r in held], [r["labels"] for r in held]
        answer = by_id[f"{task}.answer_accuracy"]["score_details"]
        assert answer["score"] == answer_accuracy(answers, labels)
        spread = answer["uncertainty"]
        low, high = answer_interval(answers, labels)
        assert spread["confidence_interval"]["lower"] == low
        assert spread["confidence_interval"]["upper"] == high
        assert spread["confidence_interval"]["confidence_level"] == 0.95
        assert "percentile bootstrap" in spread["confidence_interval"]["method"]
        assert spread["num_samples"] == len(held)
        assert spread["num_bootstrap_samples"] == RESAMPLES
        assert 0 < spread["standard_error"]["value"] < 0.1
        top = by_id[f"{task}.ranking.sentence_accuracy"]["score_details"]
        assert top["score"] == pytest.approx(results["tasks"][task]["ranking"]["sentence_accuracy"])
        assert top["uncertainty"]["num_samples"] == len(held)
    entries = parse_eval_result_entries(
        yaml.safe_load((out / ".eval_results" / "bla.yaml").read_text())
    )
    url = f"https://huggingface.co/me/model/blob/main/.eval_results/{RECORD_FILE}"
    assert {e.source_url for e in entries} == {url}
    assert all(f"Every Eval Ever record .eval_results/{RECORD_FILE}" in e.notes for e in entries)
    assert f"wrote {out / '.eval_results' / 'bla.yaml'}" in capsys.readouterr().out


def test_the_record_is_pushed_with_the_entries_and_replaced_only_when_its_own(
    tmp_path: Path, capsys
) -> None:
    run = answered_run(tmp_path)
    out = tmp_path / "repo"
    argv = [str(run), "--output", str(out), "--repo-id", "me/model"]
    assert export_main([*argv, "--push", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert f"'.eval_results/{RECORD_FILE}'" in printed and "'.eval_results/bla.yaml'" in printed
    assert export_main(argv) == 0  # its own record: replaced
    capsys.readouterr()
    (out / ".eval_results" / RECORD_FILE).write_text('{"mine": 1}\n')
    refused(export_main, argv, capsys, f"{RECORD_FILE} exists and was not written by")
    assert (out / ".eval_results" / RECORD_FILE).read_text() == '{"mine": 1}\n'
    refused(export_main, [*argv[:-1], "a/b/c"], capsys, "--repo-id 'a/b/c' is not a Hub repo id")
    with pytest.raises(ValueError):
        check_repo_id("a/b/c")


def test_a_record_without_variation_gives_no_interval(tmp_path: Path, capsys) -> None:
    """Every answer right: the resamples never vary, so the record has no interval and says
    why (a width-0 interval is no evidence), and the standard error is 0."""
    run = answered_run(tmp_path)
    records = lines_of(run / SCORES_FILE)
    for record in records:
        record["answers"] = ["Yes." if y else "No." for y in record["labels"]]
    (run / SCORES_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    assert export_main([str(run), "--output", str(tmp_path / "out")]) == 0
    record = json.loads((tmp_path / "out" / ".eval_results" / RECORD_FILE).read_text())
    assert [e.message for e in _validator().iter_errors(record)] == []
    answer = record["evaluation_results"][0]["score_details"]
    assert answer["score"] == 1.0 and answer["details"] == {"interval": "no variation"}
    assert "confidence_interval" not in answer["uncertainty"]
    assert answer["uncertainty"]["standard_error"]["value"] == 0.0


def test_a_record_missing_a_required_field_fails_the_schema(tmp_path: Path) -> None:
    """The schema check can fail: a record without model_info, or with a score as text."""
    run = answered_run(tmp_path)
    assert export_main([str(run), "--output", str(tmp_path / "out")]) == 0
    record = json.loads((tmp_path / "out" / ".eval_results" / RECORD_FILE).read_text())
    broken = {k: v for k, v in record.items() if k != "model_info"}
    assert any("model_info" in e.message for e in _validator().iter_errors(broken))
    record["evaluation_results"][0]["score_details"]["score"] = "0.5"
    assert list(_validator().iter_errors(record))


def test_ratio_standard_error_by_hand() -> None:
    """Equal denominators: the sample sd of the ratios over sqrt(n); a ratio of sums otherwise
    (the delta method); undefined below two datapoints or with nothing counted."""
    shares = np.array([1.0, 0.5, 0.75, 0.0, 1.0])
    assert ratio_standard_error(4 * shares, [4] * 5) == pytest.approx(
        shares.std(ddof=1) / np.sqrt(5)
    )
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 4.0])
    r = a.sum() / b.sum()
    assert ratio_standard_error(a, b) == pytest.approx(
        np.sqrt(3 / 2 * ((a - r * b) ** 2).sum()) / b.sum()
    )
    assert np.isnan(ratio_standard_error([1.0], [2.0]))
    assert np.isnan(ratio_standard_error([0.0, 0.0], [0.0, 0.0]))
    assert formulas.no_variation([0.5, 0.5])


def test_the_headline_carries_the_runs_own_interval(tmp_path: Path, capsys) -> None:
    """One interval per number: where results.json holds the headline's interval, the record
    and the notes give that one (its resamples and seed), not a new bootstrap."""
    run = answered_run(tmp_path)
    results = json.loads((run / RESULTS_FILE).read_text())
    results["confidence_intervals"] = {
        "level": 0.95,
        "method": formulas.INTERVAL_METHOD,
        "resamples": 2000,
        "seed": 0,
        "tasks": {t: {"ranking": {"sentence_accuracy": [0.4, 0.6]}} for t in results["tasks"]},
    }
    (run / RESULTS_FILE).write_text(json.dumps(results))
    assert export_main([str(run), "--output", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out" / ".eval_results"
    record = json.loads((folder / RECORD_FILE).read_text())
    top = record["evaluation_results"][1]
    assert top["evaluation_result_id"].endswith(".ranking.sentence_accuracy")
    spread = top["score_details"]["uncertainty"]
    assert [spread["confidence_interval"][k] for k in ("lower", "upper")] == [0.4, 0.6]
    assert "2000 resamples" in spread["confidence_interval"]["method"]
    assert spread["num_bootstrap_samples"] == 2000
    entries = parse_eval_result_entries(yaml.safe_load((folder / "bla.yaml").read_text()))
    assert all("sentence_accuracy 0." in e.notes and "[0.4000, 0.6000]" in e.notes for e in entries)
