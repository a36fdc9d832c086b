"""inspect logs as ``bla-eval export`` reads them, built here in inspect's layout (the same forms
written by inspect itself are exported in ``tests/bla_eval/harnesses/test_inspect_export.py``):
every spelling of a Hub task, the dataset from the log, partial runs, and logs that lie (wrong
types, numbers out of range, too large or too deep)."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from bla_eval.analysis import inspect_log
from bla_eval.analysis.cli import export_main
from huggingface_hub import parse_eval_result_entries

from tests.bla_eval.commands import refused

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def header(task: str = "hf/bla-org/bla/coordination", **changes: Any) -> dict[str, Any]:
    """A finished log's header as inspect 0.3.285 writes it for a Hub task."""
    doc = {
        "version": 2,
        "status": "success",
        "eval": {
            "task": task,
            "created": "2026-11-27T10:00:00+00:00",
            "model": "openai-api/local/tiny",
            "dataset": {"name": "bla-org/bla", "location": "bla-org/bla", "samples": 16},
            "config": {"limit": None, "epochs": 1},
            "task_args": {},
            "packages": {"inspect_ai": "0.3.285"},
        },
        "results": {
            "total_samples": 16,
            "completed_samples": 16,
            "scores": [
                {
                    "name": "match",
                    "metrics": {"accuracy": {"value": 0.5625}, "stderr": {"value": 0.128}},
                }
            ],
        },
    }
    for path, value in changes.items():
        node = doc
        *parents, last = path.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    return doc


def write_log(path: Path, doc: Any) -> Path:
    """``doc`` as a ``.json`` log, or as the header member of an ``.eval`` zip."""
    if path.suffix == ".json":
        path.write_text(json.dumps(doc), encoding="utf-8")
    else:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(inspect_log.HEADER, json.dumps(doc))
    return path


def entries(out: Path) -> list:
    return parse_eval_result_entries(
        yaml.safe_load((out / ".eval_results" / "bla.yaml").read_text())
    )


@pytest.mark.parametrize(
    ("task", "revision", "note"),
    [
        ("hf/bla-org/bla/coordination", None, None),
        ("hf/bla-org/bla/coordination/coordination", None, None),
        ("hf/bla-org/bla@v1.0.0/coordination", None, "dataset revision v1.0.0"),
        (f"hf/bla-org/bla@{COMMIT}/coordination", COMMIT, None),
        ("hf/bla-org/bla/coordination@v1.0.0/coordination", None, "dataset revision v1.0.0"),
    ],
)
@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_every_spelling_of_a_hub_task_exports(task, revision, note, suffix, tmp_path, capsys):
    log = write_log(tmp_path / f"log{suffix}", header(task))
    assert export_main([str(log), "--output", str(tmp_path / "out")]) == 0
    [entry] = entries(tmp_path / "out")
    assert (entry.dataset_id, entry.task_id, entry.value) == ("bla-org/bla", "coordination", 0.5625)
    assert entry.dataset_revision == revision
    assert entry.notes.startswith(f"inspect-ai 0.3.285; task {task}; model openai-api/local/tiny")
    assert "n 16 sentences; 95% CI [0.3116, 0.8134]" in entry.notes
    assert (note in entry.notes) if note else "dataset revision" not in entry.notes


def test_the_dataset_comes_from_the_log(tmp_path, capsys):
    log = write_log(tmp_path / "a.json", header(**{"eval.dataset.location": "me/bla-copy"}))
    assert export_main([str(log), "--output", str(tmp_path / "a")]) == 0
    assert entries(tmp_path / "a")[0].dataset_id == "me/bla-copy"
    local = header(**{"eval.dataset.location": str(tmp_path)})
    log = write_log(tmp_path / "b.json", local)
    refused(export_main, [str(log)], capsys, f"ran on the local dataset {str(tmp_path)!r}")
    argv = [str(log), "--output", str(tmp_path / "b"), "--dataset-id", "bla-org/bla"]
    assert export_main(argv) == 0
    assert entries(tmp_path / "b")[0].dataset_id == "bla-org/bla"


def test_own_task_logs_export_their_answer_match(tmp_path, capsys):
    doc = header("bla_eval/coordination", **{"eval.dataset.location": "bla-org/bla"})
    doc["results"]["scores"] = [
        {
            "name": "bla_scorer",
            "metrics": {
                "answer_match": {"value": 0.5625},
                "answer_match_ci_low": {"value": 0.4},
                "answer_match_ci_high": {"value": 0.7},
                "ranking.sentence_accuracy": {"value": 0.75},
                "n": {"value": 4},
            },
        }
    ]
    log = write_log(tmp_path / "own.eval", doc)
    assert export_main([str(log), "--output", str(tmp_path / "out")]) == 0
    [entry] = entries(tmp_path / "out")
    assert entry.value == 0.5625 and entry.task_id == "coordination"
    assert "n 4 datapoints; 95% CI [0.4000, 0.7000]" in entry.notes
    assert "BLA headline ranking.sentence_accuracy 0.7500" in entry.notes


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"eval.config.limit": 8}, "config.limit 8 of 16 samples"),
        ({"eval.config.limit": [0, 8]}, "config.limit [0, 8] of 16 samples"),
        ({"eval.config.sample_id": ["a"]}, "config.sample_id ['a']"),
        ({"results.completed_samples": 12}, "12 of 16 samples completed"),
    ],
)
def test_a_partial_log_is_refused_unless_allowed(changes, reason, tmp_path, capsys):
    log = write_log(tmp_path / "part.json", header(**changes))
    out = tmp_path / "out"
    refused(export_main, [str(log), "--output", str(out)], capsys, f"partial run ({reason})")
    assert not out.exists()
    assert export_main([str(log), "--output", str(out), "--allow-partial"]) == 0
    assert f"PARTIAL RUN exported with --allow-partial: {reason}" in entries(out)[0].notes


def _metric(value: Any) -> dict[str, Any]:
    doc = header()
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = value
    return doc


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_metric(5.0), "metric 'accuracy' must be a proportion in [0, 1], not 5.0"),
        (_metric(float("nan")), "must be a finite number, not nan"),
        (_metric(float("inf")), "must be a finite number, not inf"),
        (_metric(10**400), "is not an inspect log: an integer of 401 digits"),
        (_metric(True), "must be a finite number, not True"),
        (_metric(-0.5), "must be at least 0, not -0.5"),
        (_metric("0.5"), "must be a finite number, not '0.5'"),
        (header(**{"eval.task": 7}), "eval.task must be a task name, not 7"),
        (header(**{"eval.created": "today"}), "eval.created must be an ISO-8601 date"),
        (header(**{"eval.dataset": "bla-org/bla"}), "eval.dataset must be an object"),
        (header(**{"eval.config.limit": "8"}), "eval.config.limit must be a whole number"),
        (header(**{"results.scores": {"a": 1}}), "results.scores must be a list"),
        (header(**{"results.completed_samples": -1}), "must be a whole number of at least 0"),
        (header("hf/bla-org/bla/other"), "not of a BLA task"),
        (header("hf/a/b/c/coordination"), "not of a BLA task"),
        ([header()], "is not an inspect log (no 'eval' section)"),
    ],
)
def test_a_log_that_lies_is_refused_in_one_line(doc, message, tmp_path, capsys):
    log = write_log(tmp_path / "bad.json", doc)
    refused(export_main, [str(log), "--output", str(tmp_path / "out")], capsys, message)
    assert not (tmp_path / "out").exists()


def test_depth_and_size_are_capped_before_reading(tmp_path, capsys, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    refused(export_main, [str(deep)], capsys, "nested deeper than 64 levels")
    nested = copy.deepcopy(header())
    nested["eval"]["metadata"] = json.loads("[" * 70 + "]" * 70)
    nested_log = write_log(tmp_path / "nested.eval", nested)
    refused(export_main, [str(nested_log)], capsys, "nested deeper than 64 levels")
    monkeypatch.setattr(inspect_log, "MAX_HEADER_BYTES", 4096)
    big = tmp_path / "big.eval"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(inspect_log.HEADER, json.dumps(header()) + " " * 1_000_000)
    assert big.stat().st_size < 10_000  # a small file that inflates to a megabyte
    refused(
        export_main,
        [str(big)],
        capsys,
        "header.json declares",
        "over the 4096 an inspect header may have",
    )
    lying = tmp_path / "lying.eval"
    lying.write_bytes(
        big.read_bytes().replace(
            (1_000_000 + len(json.dumps(header()))).to_bytes(4, "little"),
            (100).to_bytes(4, "little"),
        )
    )
    with pytest.raises(ValueError, match="inflates past 4096 bytes|not an inspect .eval log"):
        inspect_log.read_header(lying)


def test_scores_are_published_from_a_run_folder_not_a_log(tmp_path, capsys):
    log = write_log(tmp_path / "log.json", header())
    argv = [str(log), "--output", str(tmp_path / "out"), "--scores", "me/bla-results"]
    refused(export_main, argv, capsys, "--scores publishes a bla-eval run folder's scores")
    assert not (tmp_path / "out").exists()
