"""The records a resumed run keeps, checked before anything is loaded, scored or removed.

Every kept record (of ``scores.jsonl`` and of the parts of a multi-process run) must be whole:
``task`` and ``id`` strings, ``scores`` finite numbers shaped as the item's images and captions,
``labels`` and ``caption_types`` as the dataset has them for that datapoint (a label edited in the
run folder is refused: the truth of a run is the dataset's), ``answers`` and ``parsed`` (when
present) shaped like the scores, ``text_similarities`` (when present) finite numbers, a row and
a column per caption. The fields a sweep and a control add (``bla_eval.conditions``) follow the
same schema, checked against what the run asks (:class:`Asked`): ``prompts`` holds
exactly the run's templates, each shaped like the scores, the first equal to the headline
``scores``; ``control`` is the run's control kind, shows exactly the images the dataset's items
give the control (``bla_eval.controls``, never the datapoint's own) and holds scores (and, in a
sweep, ``prompts``) by the same rules. Each error names the file and the line.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..benchmarks import TEXT_SIMILARITIES
from ..conditions import CONTROL, PROMPTS
from ..items import Item, as_record_value
from .check import Key

REQUIRED = ("task", "id", "scores", "labels", "caption_types")
"""The fields every score record has (``bla_eval.runs.scores.make_record``)."""
PARSED = ("yes", "no", None)
"""The values of a record's ``parsed`` answers."""


@dataclass(frozen=True)
class Asked:
    """The conditions a run asks: the templates of its sweep (none: no sweep), its control kind
    and each datapoint's control twin, (task, id) -> item (none: no control)."""

    templates: Sequence[str] = ()
    control: str | None = None
    twins: Mapping[Key, Item] = field(default_factory=dict)


def check_kept(
    path: Path,
    line: int,
    record: Mapping[str, Any],
    items: Mapping[Key, Item],
    asked: Asked | None = None,
) -> None:
    """Refuse a kept record that is malformed, disagrees with the dataset's item or does not
    hold the conditions ``asked`` (ValueError naming ``path`` and ``line``). A record of a
    datapoint not in ``items`` is left to ``bla_eval.runs.check.check_records`` (which names the
    run's selection)."""
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
    if TEXT_SIMILARITIES in record:  # one row per caption
        similar = record[TEXT_SIMILARITIES]
        _check_shape(what, TEXT_SIMILARITIES, similar, columns, columns, _score, flat=False)
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
    _check_conditions(what, record, item, asked or Asked())


def _check_conditions(what: str, record: Mapping[str, Any], item: Item, asked: Asked) -> None:
    """The ``prompts`` and ``control`` fields of a record against the run's conditions."""
    _check_prompts(what, "", record, item, asked.templates)
    control = record.get(CONTROL)
    if asked.control is None:
        if CONTROL in record:
            raise ValueError(f"{what}: holds a control ({CONTROL}) the run does not ask")
        return
    if not isinstance(control, dict) or not {"kind", "images", "scores"} <= control.keys():
        raise ValueError(
            f"{what}: {CONTROL} must be an object with kind, images and scores, not "
            f"{_shown(control)}"
        )
    if control["kind"] != asked.control:
        raise ValueError(
            f"{what}: {CONTROL}.kind is {_shown(control['kind'])}, the run asks {asked.control!r}"
        )
    twin = asked.twins.get((item.task, item.id))
    expected = [ref.key for ref in twin.images] if twin is not None else None
    own = {ref.key for ref in item.images}
    images = control["images"]
    if isinstance(images, list) and own & {i for i in images if isinstance(i, str)}:
        raise ValueError(f"{what}: {CONTROL}.images names the datapoint's own image {images}")
    if expected is not None and images != expected:
        raise ValueError(
            f"{what}: {CONTROL}.images is {_shown(images)}, but the dataset's control of this "
            f"datapoint shows {expected}"
        )
    rows, columns = len(item.images), len(item.captions)
    _check_shape(what, f"{CONTROL}.scores", control["scores"], rows, columns, _score)
    _check_prompts(what, f"{CONTROL}.", control, item, asked.templates)


def _check_prompts(
    what: str, prefix: str, holder: Mapping[str, Any], item: Item, templates: Sequence[str]
) -> None:
    """``holder[PROMPTS]``: exactly ``templates`` (absent without a sweep), each shaped like the
    scores, the first equal to ``holder``'s headline ``scores`` (``prefix``: where ``holder`` is
    in the record, for the error)."""
    name = prefix + PROMPTS
    if not templates:
        if PROMPTS in holder:
            raise ValueError(f"{what}: holds {name}, but the run asks no --prompts sweep")
        return
    prompts = holder.get(PROMPTS)
    if not isinstance(prompts, dict):
        raise ValueError(
            f"{what}: {name} must hold the scores of each template of the sweep "
            f"({', '.join(templates)}), not {_shown(prompts)}"
        )
    foreign = [t for t in prompts if t not in templates]
    if foreign:
        raise ValueError(
            f"{what}: {name} holds template {_shown(foreign[0])}, which the run does not ask "
            f"(it asks {', '.join(templates)})"
        )
    missing = [t for t in templates if t not in prompts]
    if missing:
        raise ValueError(
            f"{what}: {name} lacks the scores of template {missing[0]!r} (a record edited or "
            "cut short)"
        )
    rows, columns = len(item.images), len(item.captions)
    for template in templates:
        _check_shape(what, f"{name}.{template}", prompts[template], rows, columns, _score)
    if prompts[templates[0]] != holder["scores"]:
        raise ValueError(
            f"{what}: {prefix}scores differ from the scores of the sweep's first template "
            f"{templates[0]!r} ({name}.{templates[0]}), which they must equal"
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
    try:  # a record built in memory may hold an int too large for a float (the reader refuses it)
        finite = math.isfinite(value)
    except OverflowError:
        finite = False
    return None if finite else "not a finite number"


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
