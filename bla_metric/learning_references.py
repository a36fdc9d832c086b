"""Published numbers of BLA-specific learning (paper §6), read from
``bla_metric/data/learning_references.yaml``.

All values are improvements over zero-shot in percentage points (:func:`bla_metric.learning.
improvement`), keyed by model, then task code (``ap``, ``co``, ``rc``). ViLBERT and LXMERT were
fine-tuned (ITM head, Appendix D); BLIP2 was prompted in context (its "learned" rows are ICL).

- Table 3 (:data:`TABLE3`): SD, precision_true and precision_false (the data file says how its
  metric blocks were told apart).
- Table 4 (:data:`TABLE4`): DD accuracy, learned on one task and tested on another (BLIP2:
  CO <-> RC only).
- Figure 3 plots accuracy zero-shot vs learned; its bar values are not printed, the text gives
  some (:data:`FIGURE3_ACCURACY`, :data:`FIGURE3_BLIP2_LEAD`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .datafile import DATA, Entry, read
from .tasks import TASKS

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FILE = DATA / "learning_references.yaml"
"""The learning tables (paper Tables 3-4, Figure 3)."""

_MODES = ("fine-tuning", "icl")
_RELATIONS = (">", "=", "<")


@dataclass(frozen=True)
class LearningData:
    """The content of ``learning_references.yaml``, checked."""

    sources: dict[str, str]
    learning_mode: dict[str, str]
    table3: dict[str, dict[str, dict[str, float]]]
    table4: dict[str, dict[str, dict[str, float]]]
    figure3_accuracy: dict[str, dict[str, tuple[str, float]]]
    figure3_blip2_lead: dict[str, float]


def read_learning(path: Path | Traversable = FILE) -> LearningData:
    """Read and check ``learning_references.yaml`` (ValueError naming the file and the entry)."""
    top = read(path)
    top.mapping(tuple(LearningData.__dataclass_fields__))
    sources = top["sources"].mapping(("table3", "table4", "figure3"))
    modes = {
        model: _choice(entry, _MODES) for model, entry in top["learning_mode"].mapping().items()
    }
    return LearningData(
        sources={key: entry.text() for key, entry in sources.items()},
        learning_mode=modes,
        table3={
            metric: {model: _by_task(entry) for model, entry in models.mapping().items()}
            for metric, models in top["table3"].mapping().items()
        },
        table4={
            model: {_code(key, entry): _by_task(entry) for key, entry in learned.mapping().items()}
            for model, learned in top["table4"].mapping().items()
        },
        figure3_accuracy={
            model: {_code(key, entry): _relation(entry) for key, entry in tasks.mapping().items()}
            for model, tasks in top["figure3_accuracy"].mapping().items()
        },
        figure3_blip2_lead=_by_task(top["figure3_blip2_lead"]),
    )


def _code(code: str, entry: Entry) -> str:
    if code not in TASKS:
        raise entry.error(f"unknown task code {code!r}: expected one of {', '.join(TASKS)}")
    return code


def _by_task(entry: Entry) -> dict[str, float]:
    """Task code -> points in [-100, 100]."""
    return {_code(code, item): item.number(-100.0, 100.0) for code, item in entry.mapping().items()}


def _choice(entry: Entry, choices: tuple[str, ...]) -> str:
    if entry.text() not in choices:
        raise entry.error(f"unknown value {entry.value!r}: expected one of {', '.join(choices)}")
    return entry.value


def _relation(entry: Entry) -> tuple[str, float]:
    relation, value = entry.items(2)
    return _choice(relation, _RELATIONS), value.number(0.0, 100.0)


_DATA = read_learning()

SOURCE_TABLE3 = _DATA.sources["table3"]
SOURCE_TABLE4 = _DATA.sources["table4"]
SOURCE_FIGURE3 = _DATA.sources["figure3"]

LEARNING_MODE: dict[str, str] = _DATA.learning_mode
"""How each published model learned: fine-tuned (ITM head) or in-context (ICL)."""

TABLE3: dict[str, dict[str, dict[str, float]]] = _DATA.table3
"""metric -> model -> task -> improvement over zero-shot (points), same task (SD)."""

TABLE4: dict[str, dict[str, dict[str, float]]] = _DATA.table4
"""model -> task learned on -> task tested on -> accuracy improvement over zero-shot (points)."""

FIGURE3_ACCURACY: dict[str, dict[str, tuple[str, float]]] = _DATA.figure3_accuracy
"""model -> task -> (relation, learned accuracy in %) as the text states them."""

FIGURE3_BLIP2_LEAD: dict[str, float] = _DATA.figure3_blip2_lead
"""Accuracy points by which learned BLIP2 beats the best learned discriminative model."""


def table3_value(metric: str, model: str, task: str) -> float | None:
    """A Table 3 value, or None where the paper has none (accuracy is only in Figure 3)."""
    return TABLE3.get(metric, {}).get(model, {}).get(task)


def table4_value(model: str, learned_on: str, tested_on: str) -> float | None:
    """A Table 4 value, or None where the paper has none."""
    return TABLE4.get(model, {}).get(learned_on, {}).get(tested_on)
