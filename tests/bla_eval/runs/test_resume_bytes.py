"""A resumed run writes the bytes of an uninterrupted one: whatever prefix of ``scores.jsonl``
an interruption left (the state a killed run leaves: its records so far, no ``results.json``),
``--resume`` completes it to the very file of a run that was never stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RESULTS_FILE, SCORES_FILE

pytestmark = pytest.mark.usefixtures("one_thread")


def _argv(tiny_clip: Path, data: Path, out: Path, *more: str) -> list[str]:
    return [
        "--model", str(tiny_clip), "--data", str(data), "--output", str(out), "--tasks", "ap",
        "co", "--limit", "7", "--device", "cpu", "--images-per-batch", "3", "--batch-size", "5",
        "--control", "shuffled", *more,
    ]  # fmt: skip


def test_resume_after_any_interruption_is_byte_identical(tiny_clip, built_dataset, tmp_path):
    whole = tmp_path / "whole"
    assert bla_eval(_argv(tiny_clip, built_dataset, whole)) == 0
    expected = (whole / SCORES_FILE).read_bytes()
    lines = expected.splitlines(keepends=True)
    assert len(lines) == 14
    for kept in (1, 4, 8, 13):  # inside a batch and at its end, early and late
        out = tmp_path / f"stopped-{kept}"
        assert bla_eval(_argv(tiny_clip, built_dataset, out)) == 0
        (out / RESULTS_FILE).unlink()
        (out / SCORES_FILE).write_bytes(b"".join(lines[:kept]))
        assert bla_eval(_argv(tiny_clip, built_dataset, out, "--resume")) == 0
        assert (out / SCORES_FILE).read_bytes() == expected, f"resumed after {kept} records"
