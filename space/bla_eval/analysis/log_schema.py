"""The schema of the part of an inspect-ai log that ``bla-eval export`` reads (its header).

Checked before any value is used: the types of ``eval`` (task, model, dataset, config, task
arguments), ``status`` and ``results`` (counts, scorers and their metrics), every metric a finite
real number (not a boolean) and not negative, the exported ones in [0, 1] (the nesting depth
is capped where the JSON is parsed, ``outputs.parse_json``). Each failure is a ValueError
naming the file and the field.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any


def _fail(path: Path, where: str, what: str, value: Any) -> None:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ValueError(f"{path}: {where} must be {what}, not {shown}")


def _typed(path: Path, where: str, value: Any, types: tuple, what: str, optional=True) -> Any:
    if (value is None and optional) or (isinstance(value, types) and not isinstance(value, bool)):
        return value
    _fail(path, where, what, value)


def _count(path: Path, where: str, value: Any) -> int | None:
    _typed(path, where, value, (int,), "a whole number")
    if value is not None and value < 0:
        _fail(path, where, "a whole number of at least 0", value)
    return value


def iso_date(path: Path | str, where: str, value: Any) -> str | None:
    """An ISO-8601 date or date-time string (the ``date`` of an entry), or None."""
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        _fail(Path(path), where, "an ISO-8601 date", value)
    return value


def number(path: Path, where: str, value: Any) -> float:
    """A finite real number, at least 0 (booleans, NaN, infinities and negatives refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(path, where, "a finite number", value)
    if value < 0:
        _fail(path, where, "at least 0", value)
    return float(value)


def proportion(path: Path, name: str, value: Any) -> float:
    """A metric that is a share of sentences or datapoints: a number in [0, 1]."""
    value = number(path, f"metric {name!r}", value)
    if value > 1:
        _fail(path, f"metric {name!r}", "a proportion in [0, 1]", value)
    return value


def _limit(path: Path, value: Any) -> None:
    if isinstance(value, list):
        if len(value) != 2 or any(_count(path, "eval.config.limit", v) is None for v in value):
            _fail(path, "eval.config.limit", "a count or [start, end]", value)
        return
    _count(path, "eval.config.limit", value)


def checked_header(path: Path, doc: Any) -> dict[str, Any]:
    """``doc`` when it is an inspect log header whose read fields have the right types."""
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        raise ValueError(f"{path} is not an inspect log (no 'eval' section)")
    spec = doc["eval"]
    _typed(path, "eval.task", spec.get("task"), (str,), "a task name", optional=False)
    _typed(path, "eval.model", spec.get("model"), (str,), "a string")
    iso_date(path, "eval.created", spec.get("created"))
    for key in ("dataset", "config", "task_args", "packages"):
        _typed(path, f"eval.{key}", spec.get(key), (dict,), "an object")
    dataset = spec.get("dataset") or {}
    for key in ("name", "location", "revision"):
        _typed(path, f"eval.dataset.{key}", dataset.get(key), (str,), "a string")
    _count(path, "eval.dataset.samples", dataset.get("samples"))
    config = spec.get("config") or {}
    _limit(path, config.get("limit"))
    _count(path, "eval.config.epochs", config.get("epochs"))
    args = spec.get("task_args") or {}
    for key in ("data", "revision"):
        _typed(path, f"eval.task_args.{key}", args.get(key), (str,), "a string")
    _typed(path, "status", doc.get("status"), (str,), "a string")
    results = _typed(path, "results", doc.get("results"), (dict,), "an object") or {}
    for key in ("completed_samples", "total_samples"):
        _count(path, f"results.{key}", results.get(key))
    scores = _typed(path, "results.scores", results.get("scores"), (list,), "a list") or []
    for k, score in enumerate(scores):
        _typed(path, f"results.scores[{k}]", score, (dict,), "an object", optional=False)
        metrics = score.get("metrics") or {}
        _typed(path, f"results.scores[{k}].metrics", metrics, (dict,), "an object")
        for name, metric in metrics.items():
            where = f"results.scores[{k}].metrics.{name}"
            _typed(path, where, metric, (dict,), "an object", optional=False)
            number(path, f"{where}.value", metric.get("value"))
    return doc
