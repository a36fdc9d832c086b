"""The consistency rule of a run folder, checked by the run that writes it and by every reader.

- ``scores.jsonl`` holds exactly the datapoints the run's settings select, each once
  (:func:`check_records`: a repeated datapoint, or one of a task or item the run does not
  select, is an error naming the file and the line);
- ``results.json`` is derived from ``scores.jsonl`` and nothing else: every reader (analyze,
  compare, export, learning-report, the Space's results store, through
  ``bla_eval.runs.RunFolder.open``) recomputes every task's metrics from the records with the
  benchmark's own ``summarise`` (:func:`check_agreement`) and refuses a run whose
  ``results.json`` says otherwise, naming the first number that differs.

The protocol of a run is read with :func:`protocol_name` only.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..protocols import DEFAULT_PROTOCOL
from .files import RESULTS_FILE, SCORES_FILE

TOLERANCE = 1e-9
"""Relative (and absolute) difference allowed between a stored and a recomputed metric (the
order of the records changes the last bits of a sum)."""

Key = tuple[str, str]
"""(task, datapoint id) of a score record."""


@dataclass
class FinishedRun:
    """A run folder whose ``results.json`` agrees with its ``scores.jsonl``: the results and,
    per task of the results, its score records in the order of the file."""

    path: Path
    results: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]

    @property
    def protocol(self) -> str:
        return protocol_name(self.results)

    @property
    def benchmark(self) -> str:
        return str(self.results.get("benchmark") or "bla")

    @property
    def probabilistic(self) -> bool:
        return is_probabilistic(self.results)


def protocol_record(results: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a run's ``results.json`` records of its protocol, as an object: ``protocol`` itself,
    ``{"name": ...}`` for an older run that records only the name, ``{}`` for none (anything
    else is refused by :func:`check_protocol` when the run is opened). The one accessor every
    reader reads the protocol's fields with."""
    protocol = results.get("protocol")
    if isinstance(protocol, dict):
        return protocol
    return {"name": protocol} if isinstance(protocol, str) and protocol else {}


def check_protocol(results_path: Path, results: Mapping[str, Any]) -> None:
    """Refuse a ``protocol`` that is neither an object, a protocol name nor absent."""
    protocol = results.get("protocol")
    if protocol is not None and not isinstance(protocol, (dict, str)):
        shown = "a list" if isinstance(protocol, list) else repr(protocol)
        raise ValueError(
            f"{results_path}: protocol must be an object (or a protocol name), not {shown}"
        )
    name = protocol_record(results).get("name")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"{results_path}: protocol.name must be a string, not {name!r}")


def protocol_name(results: Mapping[str, Any]) -> str:
    """The protocol a run's ``results.json`` records (``protocol.name``; runs that record none
    are zero-shot runs). The one accessor every reader labels a run with."""
    return str(protocol_record(results).get("name") or DEFAULT_PROTOCOL)


def is_probabilistic(results: Mapping[str, Any]) -> bool:
    """The run's binary view thresholds probabilities (else: the top-k rule of rankers)."""
    return str(protocol_record(results).get("binary_view", "")).startswith("threshold")


def record_key(record: Mapping[str, Any]) -> Key:
    """(task, datapoint id) of a score record."""
    return (str(record["task"]), str(record["id"]))


def check_records(
    path: Path,
    numbered: list[tuple[int, dict[str, Any]]],
    tasks: Collection[str],
    selected: Collection[Key] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The records of ``path`` per task (in file order), after refusing a record of a task not
    in ``tasks``, of a datapoint not in ``selected`` (when given) or of a datapoint already
    scored on an earlier line (ValueError naming the file and the line)."""
    by_task: dict[str, list[dict[str, Any]]] = {str(t): [] for t in tasks}
    first_line: dict[Key, int] = {}
    for line, record in numbered:
        key = record_key(record)
        task, item = key
        if task not in by_task:
            raise ValueError(
                f"{path}: line {line} scores task {task!r}, which the run does not select "
                f"(it selects {', '.join(by_task) or 'no task'})"
            )
        if selected is not None and key not in selected:
            raise ValueError(
                f"{path}: line {line} scores {task} datapoint {item!r}, which the run's "
                "settings do not select (another --limit, --split or dataset, or a foreign id)"
            )
        if key in first_line:
            raise ValueError(
                f"{path}: line {line} scores {task} datapoint {item!r} again (first on line "
                f"{first_line[key]})"
            )
        first_line[key] = line
        by_task[task].append(record)
    return by_task


def scores_path(folder: Path, results: Mapping[str, Any]) -> Path:
    """The scores file ``results.json`` names: a plain file name inside the run folder."""
    name = str(results.get("scores_file") or SCORES_FILE)
    if Path(name).name != name or name in (".", ".."):
        raise ValueError(
            f"{folder / RESULTS_FILE}: scores_file {name!r} is not a file name inside the run "
            "folder"
        )
    return folder / name


def check_agreement(
    results_path: Path,
    path: Path,
    results: Mapping[str, Any],
    records: Mapping[str, list[dict[str, Any]]],
) -> None:
    """Recompute each task's metrics from its records; refuse the first stored number that
    differs, and a headline metric that is not stored."""
    from ..benchmarks import get_benchmark

    bench = get_benchmark(str(results.get("benchmark") or "bla"))
    check_protocol(results_path, results)
    probabilistic = is_probabilistic(results)
    check_binary_view(results_path, path, results, records)
    for task, stored in results["tasks"].items():
        held = records.get(task, [])
        if stored.get("n") != len(held):
            raise ValueError(
                f"{results_path} counts {stored.get('n')} datapoints of {task} but {path} holds "
                f"{len(held)}: the run is unfinished or its files were edited (results.json was "
                "not computed from this scores file); run bla-eval again"
            )
        try:
            recomputed = bench.summarise(held, probabilistic)
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path}: the records of {task} cannot be summarised: {err}") from err
        for view, metric in bench.headline.items():
            derived, kept = recomputed.get(view), stored.get(view)
            if isinstance(derived, dict) and metric in derived and metric not in (kept or {}):
                raise ValueError(f"{results_path} has no {view} {metric} for {task}")
        difference = first_difference(stored, recomputed)
        if difference is not None:
            where, kept, derived = difference
            raise ValueError(
                f"{results_path} disagrees with {path}: {task} {where} is {kept} in results.json "
                f"but {derived} from the scores"
            )
    check_conditions(results_path, path, results, records, bench, probabilistic)


BINARY_VIEWS = ("threshold 0.5", "top-k")
"""The binary views a run records (``protocol.binary_view``): P(yes) thresholded, or top-k."""


def check_binary_view(
    results_path: Path,
    path: Path,
    results: Mapping[str, Any],
    records: Mapping[str, list[dict[str, Any]]],
) -> None:
    """Refuse a binary view that is not one of :data:`BINARY_VIEWS`, and a thresholded view of
    scores that are not probabilities (a score outside [0, 1]): the view decides the binary
    metrics, so it must follow from the scores, not only agree with numbers edited beside it."""
    protocol = protocol_record(results)
    if "binary_view" not in protocol:
        return
    view = protocol["binary_view"]
    if view not in BINARY_VIEWS:
        raise ValueError(
            f"{results_path}: protocol.binary_view is {view!r}; expected one of "
            f"{', '.join(map(repr, BINARY_VIEWS))}"
        )
    if view != BINARY_VIEWS[0]:
        return
    for task, held in records.items():
        for record in held:
            outside = [s for s in _flat(record.get("scores")) if not 0.0 <= s <= 1.0]
            if outside:
                raise ValueError(
                    f"{results_path} thresholds P(yes) at 0.5, but {path} holds a score of "
                    f"{outside[0]} (not a probability) for {task} datapoint {record.get('id')!r}"
                )


def _flat(scores: Any) -> list[float]:
    """The numbers of a flat or nested score list (anything else is left to other checks)."""
    if isinstance(scores, (list, tuple)):
        return [value for item in scores for value in _flat(item)]
    return [float(scores)] if _number(scores) else []


def check_conditions(
    results_path: Path,
    path: Path,
    results: Mapping[str, Any],
    records: Mapping[str, list[dict[str, Any]]],
    bench: Any,
    probabilistic: bool,
) -> None:
    """A sweep's and a control's parts of results.json recomputed from the records
    (``bla_eval.conditions``); the first number that differs is refused."""
    from ..conditions import CONDITION_KEYS, results_fields

    if not any(key in results for key in CONDITION_KEYS):
        return
    by_task = {task: records.get(task, []) for task in results["tasks"]}
    metric = bench.headline.get("ranking", "sentence_accuracy")
    try:
        recomputed = results_fields(bench.summarise, by_task, probabilistic, metric)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(
            f"{path}: the records' templates or controls cannot be read: {err}"
        ) from err
    for key in CONDITION_KEYS:
        if (key in results) != (key in recomputed):
            raise ValueError(f"{results_path} and {path} disagree on whether the run has {key}")
        difference = first_difference(results.get(key), recomputed.get(key), key)
        if difference is not None:
            where, kept, derived = difference
            raise ValueError(
                f"{results_path} disagrees with {path}: {where} is {kept} in results.json but "
                f"{derived} from the scores"
            )


def first_difference(stored: Any, recomputed: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """(path, stored, recomputed) of the first number of ``stored`` that ``recomputed`` gives
    otherwise (keys only one side has are not compared), or None."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key, value in stored.items():
            if key in recomputed:
                found = first_difference(value, recomputed[key], f"{where}.{key}".lstrip("."))
                if found is not None:
                    return found
        return None
    if isinstance(stored, list) and isinstance(recomputed, (list, tuple)):
        if len(stored) != len(recomputed):
            return where, stored, list(recomputed)
        for k, (a, b) in enumerate(zip(stored, recomputed, strict=True)):
            found = first_difference(a, b, f"{where}[{k}]")
            if found is not None:
                return found
        return None
    if _number(stored) and _number(recomputed):
        same = math.isclose(stored, recomputed, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
        both_nan = math.isnan(stored) and math.isnan(recomputed)
        return None if same or both_nan else (where, stored, recomputed)
    if _number(stored) != _number(recomputed):
        return where, stored, recomputed
    return None


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
