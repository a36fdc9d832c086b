"""``bla-eval learning-report``: it refuses a run that is not a learning run and names a
``finetune.json`` it cannot read, in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RESULTS_FILE

from tests.bla_eval.commands import copy_run, refused

pytestmark = pytest.mark.usefixtures("one_thread")


def _results_of(run: Path) -> dict:
    return json.loads((run / RESULTS_FILE).read_text())


def test_learning_report_refuses_runs_that_are_not_learning_runs(
    co_run, learning_run, tmp_path, capsys
):
    refused(bla_eval, ["learning-report", co_run], capsys, "is not a learning run", "'bla'")
    valse = copy_run(learning_run, tmp_path, "valse")
    results = _results_of(valse)
    results["benchmark"] = "valse"  # what a VALSE run's results.json says
    (valse / RESULTS_FILE).write_text(json.dumps(results))
    refused(bla_eval, ["learning-report", valse], capsys, "is not a learning run", "'valse'")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda d: d.pop("task"), "has no str 'task'"),
        (lambda d: d.update(task="xx"), "'xx'"),
        (lambda d: d.update(runs=[]), "has no runs"),
        (lambda d: d["runs"][0].pop("finetuned"), "KeyError 'finetuned'"),
    ],
    ids=["no task", "unknown task", "no runs", "a run without its scores"],
)
def test_learning_report_names_a_finetune_json_it_cannot_read(edit, fragment, tmp_path, capsys):
    folder = tmp_path / "tuned"
    folder.mkdir()
    document = {
        "model": "m",
        "task": "coordination",
        "runs": [{"finetuned": {}}],
        "summary": {"coordination_learning": {"finetuned": {"all": {}}, "zero_shot": {}}},
    }
    edit(document)
    (folder / "finetune.json").write_text(json.dumps(document), encoding="utf-8")
    refused(bla_eval, ["learning-report", folder], capsys, str(folder / "finetune.json"), fragment)


def test_learning_report_names_a_finetune_json_that_is_not_utf8(tmp_path, capsys):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "finetune.json").write_bytes(b'{"task": "\xff"}')
    refused(bla_eval, ["learning-report", tmp_path / "t"], capsys, "finetune.json is not UTF-8")
