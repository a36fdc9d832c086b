"""Per-item score records (scores.jsonl, appended as computed) and the run's result files."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .items import Item, as_record_value

SCORES_FILE = "scores.jsonl"
RESULTS_FILE = "results.json"
RUN_FILE = "run.json"


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write JSON through a temporary file and a rename, so a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    """A JSON document of a run folder (an error names the file)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {path}: {err}") from err


def read_records(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """Records of a scores file. A last line cut off by a crash is dropped (and, with ``repair``,
    removed from the file); any other bad line is an error naming it."""
    path = Path(path)
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
            if repair:
                path.write_text("".join(lines[:-1]), encoding="utf-8")
    return records


def read_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``results.json`` and the score records of a finished run folder."""
    run_dir = Path(run_dir)
    results = read_json(run_dir / RESULTS_FILE)
    return results, read_records(run_dir / results.get("scores_file", SCORES_FILE))


def make_record(
    item: Item,
    scores: Sequence[Sequence[float]],
    answers: Sequence[Sequence[str]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scores.jsonl record of one item (``scores[i][j]``: image i, caption j); ``extra``
    adds per-sentence fields (one row per image, like ``answers``)."""
    record: dict[str, Any] = {
        "task": item.task,
        "id": item.id,
        "scores": as_record_value([[float(s) for s in row] for row in scores]),
        "labels": as_record_value(item.labels),
        "caption_types": list(item.caption_types),
    }
    if answers is not None:
        record["answers"] = as_record_value(answers)
    for key, value in (extra or {}).items():
        record[key] = as_record_value(value)
    return record


class ScoreStore:
    """Append-only ``scores.jsonl``: one line per item, flushed as soon as it is scored."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        if not resume and path.exists():
            path.unlink()
        self.records: dict[tuple[str, str], dict[str, Any]] = {
            (r["task"], r["id"]): r for r in read_records(path, repair=True)
        }
        self._file = path.open("a", encoding="utf-8")

    def done(self, item: Item) -> bool:
        """True when the item already has a record."""
        return (item.task, item.id) in self.records

    def add(
        self,
        item: Item,
        scores: Sequence[Sequence[float]],
        answers: Sequence[Sequence[str]] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Append the item's record and flush it to disk."""
        record = make_record(item, scores, answers, extra)
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        self.records[(item.task, item.id)] = record

    def close(self) -> None:
        self._file.close()
