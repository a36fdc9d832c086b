"""Per-datapoint score records (scores.jsonl, appended as computed) and the results document."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .data import Datapoint

SCORES_FILE = "scores.jsonl"
RESULTS_FILE = "results.json"
RUN_FILE = "run.json"


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write JSON through a temporary file and a rename, so a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of a scores file; a last line cut off by a crash is dropped (also from the file)."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    records = []
    for number, line in enumerate(lines, 1):
        try:
            if not line.endswith("\n"):
                raise ValueError("unterminated line")
            records.append(json.loads(line))
        except ValueError as err:
            if number < len(lines):
                raise ValueError(f"{path}: line {number} is not a score record: {err}") from err
            path.write_text("".join(lines[:-1]), encoding="utf-8")
    return records


class ScoreStore:
    """Append-only ``scores.jsonl``: one line per datapoint, flushed as soon as it is scored."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        if not resume and path.exists():
            path.unlink()
        self.records: dict[tuple[str, str], dict[str, Any]] = {
            (r["task"], r["id"]): r for r in read_records(path)
        }
        self._file = path.open("a", encoding="utf-8")

    def done(self, point: Datapoint) -> bool:
        """True when the datapoint already has a record."""
        return (point.task, point.id) in self.records

    def add(self, point: Datapoint, scores: list[float], answers: list[str] | None = None) -> None:
        """Append the datapoint's record and flush it to disk."""
        record: dict[str, Any] = {
            "task": point.task,
            "id": point.id,
            "scores": [float(s) for s in scores],
            "labels": point.labels,
            "caption_types": point.caption_types,
        }
        if answers is not None:
            record["answers"] = answers
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        self.records[(point.task, point.id)] = record

    def close(self) -> None:
        self._file.close()


def answer_labels(answers: Sequence[Sequence[str]]) -> list[list[int]]:
    """Generated answers as labels: an answer starting with 'yes' -> 1, anything else -> 0."""
    return [[int(a.strip().lower().startswith("yes")) for a in row] for row in answers]


def task_metrics(records: Sequence[dict[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Ranking, binary and pairwise metrics of one task, all from ``bla_metric.formulas``."""
    from bla_metric import formulas

    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    if probabilistic:
        predicted = formulas.threshold_labels(scores, 0.5)
    else:
        predicted = formulas.top_k_labels(scores, labels)
    out: dict[str, Any] = {
        "n": len(records),
        "ranking": formulas.ranking_metrics(scores, labels),
        "binary": formulas.binary_metrics(predicted, labels),
        "pairwise": formulas.pairwise_preferences(scores, [r["caption_types"] for r in records]),
    }
    if records and all("answers" in r for r in records):
        out["binary_answers"] = formulas.binary_metrics(
            answer_labels([r["answers"] for r in records]), labels
        )
    return out
