"""The published reference rows of ``bla_metric.references``, grouped for tables and plots."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from bla_metric import references

CHANCE = "Chance"
REFERENCE_KINDS: dict[str, str] = {
    "CLIP": "contrastive",
    "ViLBERT": "itm",
    "LXMERT": "itm",
    "BLIP2": "generative",
    "OpenFlamingo": "generative",
    "GPT-2": "text",
    "Humans": "human",
    "Experts": "human",
}
"""Model kind of each published model, in the engine's names ("human" for people)."""


@dataclass(frozen=True)
class ReferenceRow:
    """One published model (or chance, or people) from one source: per task, per view, metrics."""

    model: str
    source: str
    kind: str = ""
    protocol: str = "zero-shot"
    tasks: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


@lru_cache(maxsize=1)
def reference_rows() -> tuple[ReferenceRow, ...]:
    """Chance first, then every (model, source) of ``bla_metric.references`` in its order."""
    grouped: dict[tuple[str, str], ReferenceRow] = {}
    for row in references.reference_rows():
        source = row["source"].split(";")[0]
        key = (row["model"], source)
        kind = REFERENCE_KINDS.get(row["model"], "")
        protocol = "" if kind == "human" else "zero-shot"
        ref = grouped.setdefault(key, ReferenceRow(row["model"], source, kind, protocol))
        metrics = {k: v for k, v in row.items() if k not in ("model", "source", "protocol", "task")}
        ref.tasks.setdefault(row["task"], {})[row["protocol"]] = metrics
    chance = ReferenceRow(
        CHANCE,
        "random order / coin flip",
        protocol="",
        tasks={t: {"ranking": references.CHANCE, "binary": references.CHANCE}
               for t in references.TASK_NAMES},
    )
    return (chance, *grouped.values())
