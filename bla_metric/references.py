"""Published BLA numbers as report rows: chance, the paper's Table 2, the thesis' Table 6.3.

Every value is a fraction in [0, 1] (the papers print percentages), keyed by config name
(``active_passive``, ``coordination``, ``relative_clause``) and by the metric names of
:mod:`bla_metric.formulas`. One row per (model, source, protocol, task):
``{"model", "source", "protocol": "binary" | "ranking", "task", <metric>: value, ...}``
(``protocol`` here is the view of the report).

The numbers themselves, with their setups and tolerances, live in the registry
:mod:`bla_metric.published`; the rows below are derived from it (the zero-shot numbers; the
learning tables' improvements are not rows of a zero-shot report).
Sources: paper = Chen, Fernández & Pezzelle, EMNLP 2023; thesis = the master thesis behind it
(older, larger caption sets; ranking view). Where a row leaves a metric out, the source has none.
"""

from __future__ import annotations

from .citation import CITATION
from .published import (
    PAPER_APPENDIX_H,
    PAPER_SECTION53,
    PAPER_TABLE2,
    PUBLISHED,
    PUBLISHED_TASKS,
    SETUPS,
    THESIS_TABLE62,
    THESIS_TABLE63,
)
from .tasks import task_configs

__all__ = [
    "CHANCE",
    "CITATION",
    "MODEL_KINDS",
    "PAPER_APPENDIX_H",
    "PAPER_SECTION53",
    "PAPER_TABLE2",
    "PUBLISHED_TASKS",
    "REFERENCE_ROWS",
    "THESIS_TABLE62",
    "THESIS_TABLE63",
    "reference_rows",
]

CHANCE: dict[str, float] = {
    "sentence_accuracy": 0.5,
    "set_accuracy": 1 / 6,
    "set_error": 1 / 6,
    "accuracy": 0.5,
    "precision_true": 0.5,
    "precision_false": 0.5,
    "recall_true": 0.5,
    "recall_false": 0.5,
    "all_same_rate": 0.125,
    "pairwise": 0.5,
}
"""Chance level of every metric for datapoints of 2 true + 2 false sentences. Ranking view and
pairwise shares: a uniformly random order (4 of the 24 orders put both true sentences on top).
Binary view: an independent fair coin per sentence (2 of the 16 labelings are all-same; with
``threshold="top_k"`` the all-same rate is 0 by construction)."""

MODEL_KINDS: dict[str, str] = {}
for _s in SETUPS.values():
    MODEL_KINDS.setdefault(_s.model, _s.kind)
del _s
"""Model kind of each published model, in the engine's kind names ("human" for people)."""


def _rows() -> list[dict]:
    """One row per (model, view, task) of the zero-shot numbers, in registry order; a metric
    from another source than the row's first one names it (``...; all_same_rate: paper §5.3``)."""
    rows: dict[tuple[str, str, str], dict] = {}
    for number in PUBLISHED:
        setup = SETUPS[number.setup]
        if setup.baseline is not None:
            continue
        key = (setup.model, number.view, number.task)
        row = rows.setdefault(
            key,
            {"model": setup.model, "source": number.source, "protocol": number.view}
            | {"task": number.task},
        )
        if not row["source"].startswith(number.source):
            row["source"] += f"; {number.metric}: {number.source}"
        row[number.metric] = number.value
    return list(rows.values())


REFERENCE_ROWS: list[dict] = _rows()
"""All published rows (see the module docstring for the shape)."""


def reference_rows(task: str | None = None, protocol: str | None = None) -> list[dict]:
    """The rows of one task and/or protocol (copies, safe to modify)."""
    if task is not None and task not in task_configs():
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(task_configs())}")
    return [
        dict(row)
        for row in REFERENCE_ROWS
        if task in (None, row["task"]) and protocol in (None, row["protocol"])
    ]
