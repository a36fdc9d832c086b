"""Published numbers of the neighbouring benchmarks, read from two data files of
``bla_metric/data/``: ``neighbours_valse_vl_checklist_winoground.yaml`` and
``neighbours_sugarcrepe_mmvp_vlm.yaml``.

Rows have the shape of :mod:`bla_metric.references`: ``{"model", "source", "benchmark", "task",
"kind", <metric>: fraction}`` (the papers print percentages). ``task`` is a config name of our
dataset repos (the VALSE instrument file, the VL-CheckList taxonomy leaf, a SugarCrepe subset,
``mmvp_vlm``), ``"all"`` for a paper's average, or a VL-CheckList category (``Object``...). Metric
names are those of the metric modules of :mod:`bla_metric.neighbours` and of the benchmark specs.
Sources:
- VALSE: Parcalabescu et al., ACL 2022, Table 2 (zero-shot; CLIP and GPT are ranked only).
- VL-CheckList: Zhao et al., 2022 (arXiv 2207.00221), Tables 2-5 (ITM heads; CLIP cosine).
- Winoground: Thrush et al., CVPR 2022, Table 3.
- SugarCrepe: Hsieh et al., NeurIPS 2023 D&B, the evaluation table (RAIVNLab/sugar-crepe).
- MMVP-VLM: Tong et al., CVPR 2024, the MMVP-VLM table (tsb0601/MMVP), per visual pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..datafile import DATA, Entry, read
from .mmvp_vlm import MMVP_PATTERNS
from .sugarcrepe import SUGARCREPE_SUBSETS
from .winoground import WINOGROUND_METRICS

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

VALSE_VLC_WINOGROUND_FILE = DATA / "neighbours_valse_vl_checklist_winoground.yaml"
"""The published numbers of VALSE, VL-CheckList and Winoground, and the kinds of their models."""
SUGARCREPE_MMVP_FILE = DATA / "neighbours_sugarcrepe_mmvp_vlm.yaml"
"""The published numbers of SugarCrepe and MMVP-VLM, and the kinds of their models."""


@dataclass(frozen=True)
class ValseVlcWinogroundData:
    """The content of ``neighbours_valse_vl_checklist_winoground.yaml``, checked (values in
    percent)."""

    valse_source: str
    valse_instruments: dict[str, str]
    valse_validated: dict[str, int]
    valse: dict[str, dict[str, tuple[float, ...]]]
    """metric -> model -> one value per instrument, then the average."""
    vl_checklist_source: str
    vl_checklist_leaves: tuple[str, ...]
    vl_checklist: dict[str, tuple[tuple[float, ...], ...]]
    """model -> (Object leaves, Attribute leaves, Relation leaves, the averages)."""
    winoground_source: str
    winoground: dict[str, tuple[float, float, float]]
    """model -> (text, image, group score)."""
    kinds: dict[str, str]


def read_valse_vlc_winoground(
    path: Path | Traversable = VALSE_VLC_WINOGROUND_FILE,
) -> ValseVlcWinogroundData:
    """Read and check ``neighbours_valse_vl_checklist_winoground.yaml`` (ValueError naming the file
    and the entry)."""
    top = read(path)
    top.mapping(("valse", "vl_checklist", "winoground", "kinds"))
    valse = top["valse"]
    valse.mapping(("source", "instruments", "validated", "percent"))
    instruments = {key: entry.text() for key, entry in valse["instruments"].mapping().items()}
    vlc = top["vl_checklist"]
    vlc.mapping(("source", "leaves", "averages", "percent"))
    winoground = top["winoground"]
    winoground.mapping(("source", "metrics", "percent"))
    if winoground["metrics"].texts() != WINOGROUND_METRICS:
        raise winoground["metrics"].error(f"expected {list(WINOGROUND_METRICS)}")
    return ValseVlcWinogroundData(
        valse_source=valse["source"].text(),
        valse_instruments=instruments,
        valse_validated=_validated(valse["validated"], instruments),
        valse={
            metric: _rows(models, len(instruments) + 1)
            for metric, models in valse["percent"].mapping().items()
        },
        vl_checklist_source=vlc["source"].text(),
        vl_checklist_leaves=tuple(leaf for group in vlc["leaves"] for leaf in group.texts()),
        vl_checklist=_vl_checklist(vlc),
        winoground_source=winoground["source"].text(),
        winoground=_rows(winoground["percent"], len(WINOGROUND_METRICS)),
        kinds={model: entry.text() for model, entry in top["kinds"].mapping().items()},
    )


def _validated(entry: Entry, instruments: dict[str, str]) -> dict[str, int]:
    counts = {key: item.integer(1) for key, item in entry.mapping().items()}
    if list(counts) != list(instruments):
        raise entry.error(f"expected the instruments {', '.join(instruments)} in this order")
    return counts


def _rows(entry: Entry, count: int) -> dict[str, tuple[float, ...]]:
    """Model -> ``count`` percentages."""
    return {model: item.numbers(count, 0.0, 100.0) for model, item in entry.mapping().items()}


def _vl_checklist(entry: Entry) -> dict[str, tuple[tuple[float, ...], ...]]:
    """Model -> one row of percentages per group of leaves, then the averages."""
    sizes = [len(group.texts()) for group in entry["leaves"].items(3)]
    sizes.append(len(entry["averages"].texts()))
    if entry["averages"].texts() != VL_CHECKLIST_AVERAGES:
        raise entry["averages"].error(f"expected {list(VL_CHECKLIST_AVERAGES)}")
    return {
        model: tuple(
            row.numbers(size, 0.0, 100.0) for row, size in zip(rows.items(4), sizes, strict=True)
        )
        for model, rows in entry["percent"].mapping().items()
    }


VL_CHECKLIST_AVERAGES = ("Object", "Attribute", "Relation", "all")
"""The averages of VL-CheckList's Table 2 (categories and overall), as rows' ``task``."""

_VALSE_VLC_WINOGROUND = read_valse_vlc_winoground()

VALSE_TABLE2 = _VALSE_VLC_WINOGROUND.valse_source
VL_CHECKLIST_TABLES = _VALSE_VLC_WINOGROUND.vl_checklist_source
WINOGROUND_TABLE3 = _VALSE_VLC_WINOGROUND.winoground_source

VALSE_INSTRUMENTS: dict[str, str] = _VALSE_VLC_WINOGROUND.valse_instruments
"""Config (instrument file ``<name>.json`` with ``-`` -> ``_``) -> title, in Table 2's column
order. ``counting-hard.json`` is the paper's "balanced" counting; ``coreference-hard.json`` its
"clean" coreference set (VisDial validation split)."""

VALSE_VALIDATED: dict[str, int] = _VALSE_VLC_WINOGROUND.valse_validated
"""Instances per instrument after manual validation (paper §3-§4, App. A.7): the items with at
least two of three annotators choosing the caption but not the foil (``mturk.caption >= 2``)."""

_VALSE = _VALSE_VLC_WINOGROUND.valse
_VLC_LEAVES = _VALSE_VLC_WINOGROUND.vl_checklist_leaves
_VLC = _VALSE_VLC_WINOGROUND.vl_checklist
_WINOGROUND = _VALSE_VLC_WINOGROUND.winoground

WINOGROUND_CONFIG = "winoground"
"""The one config of the Winoground dataset repo (400 examples, split ``test``)."""

WINOGROUND_CHANCE = {"text_score": 0.25, "image_score": 0.25, "group_score": 1 / 6}
"""Random chance (paper Table 3): 1/4, 1/4 and 1/6 (4 of the 24 orders of four scores)."""


def _valse_rows() -> list[dict]:
    rows: dict[tuple[str, str], dict] = {}
    tasks = [*VALSE_INSTRUMENTS, "all"]
    for metric, models in _VALSE.items():
        for model, values in models.items():
            for task, value in zip(tasks, values, strict=True):
                row = rows.setdefault(
                    (model, task),
                    {
                        "model": model,
                        "source": VALSE_TABLE2,
                        "benchmark": "valse",
                        "task": task,
                    },
                )
                row[metric] = round(value / 100, 6)
    return list(rows.values())


def _vl_checklist_rows() -> list[dict]:
    rows = []
    tasks = (*_VLC_LEAVES, *VL_CHECKLIST_AVERAGES)
    for model, (obj, attr, rel, overall) in _VLC.items():
        for task, value in zip(tasks, (*obj, *attr, *rel, *overall), strict=True):
            rows.append(
                {
                    "model": model,
                    "source": VL_CHECKLIST_TABLES,
                    "benchmark": "vl-checklist",
                    "task": task,
                    "accuracy": round(value / 100, 6),
                }
            )
    return rows


def _winoground_rows() -> list[dict]:
    return [
        {
            "model": model,
            "source": WINOGROUND_TABLE3,
            "benchmark": "winoground",
            "task": WINOGROUND_CONFIG,
            "text_score": round(t / 100, 6),
            "image_score": round(i / 100, 6),
            "group_score": round(g / 100, 6),
        }
        for model, (t, i, g) in _WINOGROUND.items()
    ]


VALSE_VLC_WINOGROUND_KINDS: dict[str, str] = _VALSE_VLC_WINOGROUND.kinds
"""Model kind of the published models of VALSE, VL-CheckList and Winoground, in the engine's
names; every other one is an ITM head."""


def _with_kind(row: dict) -> dict:
    return {**row, "kind": VALSE_VLC_WINOGROUND_KINDS.get(row["model"], "itm")}


_VALSE_VLC_WINOGROUND_ROWS: list[dict] = [
    _with_kind(r)
    for r in (*_valse_rows(), *_vl_checklist_rows(), *_winoground_rows())
    if r["model"] != "Random Chance"
]


MMVP_CONFIG = "mmvp_vlm"
"""The one config of the MMVP-VLM dataset repo."""
AVERAGE_TOLERANCE = 0.1
"""How far (in points) MMVP-VLM's printed average may be from the mean of its nine printed
patterns: each pattern is rounded to 0.1, so their mean is off by at most 0.05, plus the average's
own rounding."""


@dataclass(frozen=True)
class SugarcrepeMmvpData:
    """The content of ``neighbours_sugarcrepe_mmvp_vlm.yaml``, checked (values in percent)."""

    sugarcrepe_source: str
    sugarcrepe: dict[str, tuple[float, ...]]
    """model -> one value per subset (``SUGARCREPE_SUBSETS``' order)."""
    mmvp_source: str
    mmvp: dict[str, tuple[float, ...]]
    """model -> one value per visual pattern (``MMVP_PATTERNS``' order), then the average."""
    kinds: dict[str, str]


def read_sugarcrepe_mmvp(path: Path | Traversable = SUGARCREPE_MMVP_FILE) -> SugarcrepeMmvpData:
    """Read and check ``neighbours_sugarcrepe_mmvp_vlm.yaml`` (ValueError naming the file and the
    entry)."""
    top = read(path)
    top.mapping(("sugarcrepe", "mmvp_vlm", "kinds"))
    sugarcrepe = top["sugarcrepe"]
    sugarcrepe.mapping(("source", "subsets", "percent"))
    if sugarcrepe["subsets"].texts() != tuple(SUGARCREPE_SUBSETS):
        raise sugarcrepe["subsets"].error(f"expected {list(SUGARCREPE_SUBSETS)}")
    mmvp = top["mmvp_vlm"]
    mmvp.mapping(("source", "percent"))
    return SugarcrepeMmvpData(
        sugarcrepe_source=sugarcrepe["source"].text(),
        sugarcrepe=_rows(sugarcrepe["percent"], len(SUGARCREPE_SUBSETS)),
        mmvp_source=mmvp["source"].text(),
        mmvp={name: _mmvp_row(entry) for name, entry in mmvp["percent"].mapping().items()},
        kinds={model: entry.text() for model, entry in top["kinds"].mapping().items()},
    )


def _mmvp_row(entry: Entry) -> tuple[float, ...]:
    """The nine patterns and the average of one model, the average checked against their mean."""
    values = entry.numbers(len(MMVP_PATTERNS) + 1, 0.0, 100.0)
    mean = sum(values[:-1]) / len(MMVP_PATTERNS)
    if abs(mean - values[-1]) > AVERAGE_TOLERANCE:
        raise entry.error(f"the average {values[-1]} is not the patterns' mean {mean:.2f}")
    return values


_SUGARCREPE_MMVP = read_sugarcrepe_mmvp()

SUGARCREPE_MMVP_KINDS: dict[str, str] = _SUGARCREPE_MMVP.kinds
"""Model kind of the published models of SugarCrepe and MMVP-VLM, in the engine's names; every
other one is contrastive."""


def _row(benchmark: str, source: str, model: str, task: str, metric: str, value: float) -> dict:
    return {
        "model": model,
        "source": source,
        "benchmark": benchmark,
        "task": task,
        "kind": SUGARCREPE_MMVP_KINDS.get(model, "contrastive"),
        metric: round(value / 100, 6),
    }


_SUGARCREPE_MMVP_ROWS: list[dict] = [
    *(
        _row("sugarcrepe", _SUGARCREPE_MMVP.sugarcrepe_source, model, subset, "accuracy", value)
        for model, values in _SUGARCREPE_MMVP.sugarcrepe.items()
        for subset, value in zip(SUGARCREPE_SUBSETS, values, strict=True)
    ),
    *(
        _row(
            "mmvp-vlm",
            _SUGARCREPE_MMVP.mmvp_source,
            model,
            MMVP_CONFIG,
            "pair_accuracy",
            values[-1],
        )
        for model, values in _SUGARCREPE_MMVP.mmvp.items()
    ),
]

MMVP_PER_PATTERN: dict[str, dict[str, float]] = {
    model: {p: round(v / 100, 6) for p, v in zip(MMVP_PATTERNS, values[:-1], strict=True)}
    for model, values in _SUGARCREPE_MMVP.mmvp.items()
}
"""Model -> visual pattern -> published pair accuracy (fraction), as ``summarise``'s
``per_pattern``."""


REFERENCE_ROWS: list[dict] = [*_VALSE_VLC_WINOGROUND_ROWS, *_SUGARCREPE_MMVP_ROWS]
"""Every published row; Winoground's "Random Chance" row is :data:`WINOGROUND_CHANCE`, MMVP-VLM's
row the printed average over the patterns (:data:`MMVP_PER_PATTERN` each pattern)."""


def reference_rows(benchmark: str, task: str | None = None) -> list[dict]:
    """Published rows of ``benchmark`` (``valse``, ``vl-checklist``, ``winoground``,
    ``sugarcrepe``, ``mmvp-vlm``), of one ``task`` when given (a config name, or ``"all"`` for
    the papers' averages)."""
    return [
        dict(r)
        for r in REFERENCE_ROWS
        if r["benchmark"] == benchmark and (task is None or r["task"] == task)
    ]
