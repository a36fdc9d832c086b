"""What the benchmark tests read from a finished run: its records by task, and the strict rule
their metrics are recomputed with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def run_bla_eval(model: Path, repo: Path, out: Path, benchmark: str, *extra: str) -> dict:
    """``bla-eval --benchmark BENCHMARK`` of ``model`` on ``repo`` into ``out`` (exit 0 checked);
    its results.json."""
    from bla_eval.cli import main as bla_eval

    argv = ["--benchmark", benchmark, "--model", model, "--data", repo, "--output", out]
    argv += ["--device", "cpu", *extra]
    assert bla_eval([str(a) for a in argv]) == 0
    return json.loads((Path(out) / "results.json").read_text())


def records_by_task(run: Path) -> dict[str, list[dict]]:
    """A run's scores.jsonl records, by task, in file order."""
    by_task: dict[str, list[dict]] = {}
    for line in (Path(run) / "scores.jsonl").read_text().splitlines():
        record = json.loads(line)
        by_task.setdefault(record["task"], []).append(record)
    return by_task


def strictly_above(scores: Sequence[float], labels: Sequence[int]) -> bool:
    """Every true caption scores strictly above every false one."""
    true = [s for s, y in zip(scores, labels, strict=True) if y]
    false = [s for s, y in zip(scores, labels, strict=True) if not y]
    return all(t > f for t in true for f in false)
