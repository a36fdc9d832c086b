"""Per-item score records: made from an item's scores, appended to ``scores.jsonl`` as computed."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..items import Item, as_record_value
from ..outputs import naming, open_own, read_records, refuse_link
from ..redact import scrub_data


def make_record(
    item: Item,
    scores: Sequence[Sequence[float]],
    answers: Sequence[Sequence[str]] | None = None,
    extra: Mapping[str, Any] | None = None,
    fields: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scores.jsonl record of one item (``scores[i][j]``: image i, caption j); ``extra``
    adds per-sentence fields (one row per image, like ``answers``), ``fields`` other fields as
    they are (a sweep's templates, a control: ``bla_eval.conditions``)."""
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
    record.update(fields or {})
    return record


class ScoreStore:
    """Append-only ``scores.jsonl``: one line per item, flushed as soon as it is scored."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        refuse_link(path)  # never appended to, truncated or removed through a link
        if not resume and path.exists():
            path.unlink()
        self.records: dict[tuple[str, str], dict[str, Any]] = {
            (r["task"], r["id"]): r for r in read_records(path, repair=True)
        }
        with naming(path):
            fd = open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            self._file = os.fdopen(fd, "a", encoding="utf-8")

    def done(self, item: Item) -> bool:
        """True when the item already has a record."""
        return (item.task, item.id) in self.records

    def add(
        self,
        item: Item,
        scores: Sequence[Sequence[float]],
        answers: Sequence[Sequence[str]] | None = None,
        extra: Mapping[str, Any] | None = None,
        fields: Mapping[str, Any] | None = None,
    ) -> None:
        """Append the item's record and flush it to disk."""
        record = scrub_data(make_record(item, scores, answers, extra, fields))
        with naming(self.path):  # a full disk names the scores file
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()
        self.records[(item.task, item.id)] = record

    def close(self) -> None:
        with naming(self.path):
            self._file.close()
