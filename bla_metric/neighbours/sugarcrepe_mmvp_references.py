"""Published numbers of SugarCrepe and MMVP-VLM, read from
``bla_metric/data/compositional_references.yaml``.

Rows have the shape of :mod:`bla_metric.neighbour_references`: ``{"model", "source", "benchmark",
"task", "kind", <metric>: fraction}`` (the papers print percentages). ``task`` is a config name of
the benchmark's dataset repo (a SugarCrepe subset, ``mmvp_vlm``); metric names are those of the
benchmark specs (``accuracy``, ``pair_accuracy``). Sources, as the authors' repositories show
them:
- SugarCrepe: Hsieh et al., NeurIPS 2023 D&B, the evaluation table (RAIVNLab/sugar-crepe).
- MMVP-VLM: Tong et al., CVPR 2024, the MMVP-VLM table (tsb0601/MMVP), per visual pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..datafile import DATA, Entry, read
from .sugarcrepe import MMVP_PATTERNS, SUGARCREPE_SUBSETS

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FILE = DATA / "neighbours_sugarcrepe_mmvp_vlm.yaml"
"""The published numbers of SugarCrepe and MMVP-VLM, and the kinds of their models."""
MMVP_CONFIG = "mmvp_vlm"
"""The one config of the MMVP-VLM dataset repo."""
AVERAGE_TOLERANCE = 0.1
"""How far (in points) MMVP-VLM's printed average may be from the mean of its nine printed
patterns: each pattern is rounded to 0.1, so their mean is off by at most 0.05, plus the average's
own rounding."""


@dataclass(frozen=True)
class CompositionalData:
    """The content of ``compositional_references.yaml``, checked (values in percent)."""

    sugarcrepe_source: str
    sugarcrepe: dict[str, tuple[float, ...]]
    """model -> one value per subset (``SUGARCREPE_SUBSETS``' order)."""
    mmvp_source: str
    mmvp: dict[str, tuple[float, ...]]
    """model -> one value per visual pattern (``MMVP_PATTERNS``' order), then the average."""
    kinds: dict[str, str]


def read_compositional(path: Path | Traversable = FILE) -> CompositionalData:
    """Read and check ``compositional_references.yaml`` (ValueError naming the file and the
    entry)."""
    top = read(path)
    top.mapping(("sugarcrepe", "mmvp_vlm", "kinds"))
    sugarcrepe = top["sugarcrepe"]
    sugarcrepe.mapping(("source", "subsets", "percent"))
    if sugarcrepe["subsets"].texts() != tuple(SUGARCREPE_SUBSETS):
        raise sugarcrepe["subsets"].error(f"expected {list(SUGARCREPE_SUBSETS)}")
    mmvp = top["mmvp_vlm"]
    mmvp.mapping(("source", "percent"))
    return CompositionalData(
        sugarcrepe_source=sugarcrepe["source"].text(),
        sugarcrepe=_rows(sugarcrepe["percent"], len(SUGARCREPE_SUBSETS)),
        mmvp_source=mmvp["source"].text(),
        mmvp={name: _mmvp_row(entry) for name, entry in mmvp["percent"].mapping().items()},
        kinds={model: entry.text() for model, entry in top["kinds"].mapping().items()},
    )


def _rows(entry: Entry, count: int) -> dict[str, tuple[float, ...]]:
    """Model -> ``count`` percentages."""
    return {model: item.numbers(count, 0.0, 100.0) for model, item in entry.mapping().items()}


def _mmvp_row(entry: Entry) -> tuple[float, ...]:
    """The nine patterns and the average of one model, the average checked against their mean."""
    values = entry.numbers(len(MMVP_PATTERNS) + 1, 0.0, 100.0)
    mean = sum(values[:-1]) / len(MMVP_PATTERNS)
    if abs(mean - values[-1]) > AVERAGE_TOLERANCE:
        raise entry.error(f"the average {values[-1]} is not the patterns' mean {mean:.2f}")
    return values


_DATA = read_compositional()

KINDS: dict[str, str] = _DATA.kinds
"""Model kind of the published models, in the engine's names; every other one is contrastive."""


def _row(benchmark: str, source: str, model: str, task: str, metric: str, value: float) -> dict:
    return {
        "model": model,
        "source": source,
        "benchmark": benchmark,
        "task": task,
        "kind": KINDS.get(model, "contrastive"),
        metric: round(value / 100, 6),
    }


REFERENCE_ROWS: list[dict] = [
    *(
        _row("sugarcrepe", _DATA.sugarcrepe_source, model, subset, "accuracy", value)
        for model, values in _DATA.sugarcrepe.items()
        for subset, value in zip(SUGARCREPE_SUBSETS, values, strict=True)
    ),
    *(
        _row("mmvp-vlm", _DATA.mmvp_source, model, MMVP_CONFIG, "pair_accuracy", values[-1])
        for model, values in _DATA.mmvp.items()
    ),
]
"""Every published row (MMVP-VLM's: the printed average over the patterns)."""

MMVP_PER_PATTERN: dict[str, dict[str, float]] = {
    model: {p: round(v / 100, 6) for p, v in zip(MMVP_PATTERNS, values[:-1], strict=True)}
    for model, values in _DATA.mmvp.items()
}
"""Model -> visual pattern -> published pair accuracy (fraction), as ``summarise``'s
``per_pattern``."""


def compositional_reference_rows(benchmark: str, task: str | None = None) -> list[dict]:
    """Published rows of ``benchmark`` (``sugarcrepe``, ``mmvp-vlm``), of one ``task`` when
    given."""
    return [
        dict(r)
        for r in REFERENCE_ROWS
        if r["benchmark"] == benchmark and (task is None or r["task"] == task)
    ]
