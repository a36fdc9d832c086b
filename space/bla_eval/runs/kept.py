"""The records a resumed run keeps, checked before anything is loaded, scored or removed.

Every kept record (of ``scores.jsonl`` and of the parts of a multi-process run) must be whole:
``task`` and ``id`` strings, ``scores`` finite numbers shaped as the item's images and captions,
``labels`` and ``caption_types`` as the dataset has them for that datapoint (a label edited in the
run folder is refused: the truth of a run is the dataset's), ``answers`` and ``parsed`` (when
present) shaped like the scores. Each error names the file and the line.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..items import Item, as_record_value
from .check import Key

REQUIRED = ("task", "id", "scores", "labels", "caption_types")
"""The fields every score record has (``bla_eval.runs.scores.make_record``)."""
PARSED = ("yes", "no", None)
"""The values of a record's ``parsed`` answers."""


def check_kept(path: Path, line: int, record: Mapping[str, Any], items: Mapping[Key, Item]) -> None:
    """Refuse a kept record that is malformed or disagrees with the dataset's item (ValueError
    naming ``path`` and ``line``). A record of a datapoint not in ``items`` is left to
    ``bla_eval.runs.check.check_records`` (which names the run's selection)."""
    where = f"{path}: line {line}"
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise ValueError(f"{where} is not a score record: it lacks {', '.join(missing)}")
    for key in ("task", "id"):
        if not isinstance(record[key], str):
            raise ValueError(f"{where}: {key} must be a string, not {_shown(record[key])}")
    item = items.get((record["task"], record["id"]))
    if item is None:
        return
    what = f"{where} ({item.task} datapoint {item.id!r})"
    rows, columns = len(item.images), len(item.captions)
    _check_shape(what, "scores", record["scores"], rows, columns, _score)
    _check_shape(what, "labels", record["labels"], rows, columns, _label)
    if record.get("answers") is not None:
        _check_shape(what, "answers", record["answers"], rows, columns, _text)
    if record.get("parsed") is not None:  # always one row per image
        _check_shape(what, "parsed", record["parsed"], rows, columns, _parsed, flat=False)
    if record["labels"] != as_record_value(item.labels):
        raise ValueError(
            f"{what}: labels {record['labels']} differ from the dataset's "
            f"{as_record_value(item.labels)} (a record edited by hand, or another dataset)"
        )
    if record["caption_types"] != list(item.caption_types):
        raise ValueError(
            f"{what}: caption_types {_shown(record['caption_types'])} differ from the dataset's "
            f"{list(item.caption_types)}"
        )


def _check_shape(
    what: str, key: str, value: Any, rows: int, columns: int, test, flat: bool = True
) -> None:
    """``value`` as stored for an item of ``rows`` images and ``columns`` captions (one image
    and ``flat``: a flat list, else a list of rows), each entry passing ``test`` (its
    complaint, or None)."""
    flat = flat and rows == 1
    shape = f"{columns} values" if flat else f"{rows} row(s) of {columns} values"
    matrix = [value] if flat else value
    if not isinstance(matrix, list) or len(matrix) != rows:
        raise ValueError(f"{what}: {key} must be {shape}, not {_shown(value)}")
    for row in matrix:
        if not isinstance(row, list) or len(row) != columns:
            raise ValueError(f"{what}: {key} must be {shape}, not {_shown(value)}")
        for entry in row:
            complaint = test(entry)
            if complaint is not None:
                raise ValueError(f"{what}: {key} holds {_shown(entry)}, {complaint}")


def _score(value: Any) -> str | None:
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return "not a number"
    return None if math.isfinite(value) else "not a finite number"


def _label(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value in (0, 1)
    return None if ok else "not a label (0 or 1)"


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "not an answer text"


def _parsed(value: Any) -> str | None:
    return None if value in PARSED and not isinstance(value, bool) else "not yes, no or null"


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
