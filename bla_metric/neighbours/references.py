"""Published numbers of VALSE, VL-CheckList and Winoground, read from
``bla_metric/data/neighbour_references.yaml``.

Rows have the shape of :mod:`bla_metric.references`: ``{"model", "source", "benchmark", "task",
"kind", <metric>: fraction}`` (the papers print percentages). ``task`` is a config name of our
dataset repos (the VALSE instrument file, the VL-CheckList taxonomy leaf), ``"all"`` for a
paper's average, or a VL-CheckList category (``Object``...). Metric names are those of
:mod:`bla_metric.neighbours`. Sources:
- VALSE: Parcalabescu et al., ACL 2022, Table 2 (zero-shot; CLIP and GPT are ranked only).
- VL-CheckList: Zhao et al., 2022 (arXiv 2207.00221), Tables 2-5 (ITM heads; CLIP cosine).
- Winoground: Thrush et al., CVPR 2022, Table 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..datafile import DATA, Entry, read

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FILE = DATA / "neighbours_valse_vl_checklist_winoground.yaml"
"""The published numbers of the three benchmarks, and the kinds of their models."""


@dataclass(frozen=True)
class NeighbourData:
    """The content of ``neighbour_references.yaml``, checked (values in percent)."""

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


def read_neighbours(path: Path | Traversable = FILE) -> NeighbourData:
    """Read and check ``neighbour_references.yaml`` (ValueError naming the file and the entry)."""
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
    return NeighbourData(
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


WINOGROUND_METRICS = ("text_score", "image_score", "group_score")
VL_CHECKLIST_AVERAGES = ("Object", "Attribute", "Relation", "all")
"""The averages of VL-CheckList's Table 2 (categories and overall), as rows' ``task``."""

_DATA = read_neighbours()

VALSE_TABLE2 = _DATA.valse_source
VL_CHECKLIST_TABLES = _DATA.vl_checklist_source
WINOGROUND_TABLE3 = _DATA.winoground_source

VALSE_INSTRUMENTS: dict[str, str] = _DATA.valse_instruments
"""Config (instrument file ``<name>.json`` with ``-`` -> ``_``) -> title, in Table 2's column
order. ``counting-hard.json`` is the paper's "balanced" counting; ``coreference-hard.json`` its
"clean" coreference set (VisDial validation split)."""

VALSE_VALIDATED: dict[str, int] = _DATA.valse_validated
"""Instances per instrument after manual validation (paper §3-§4, App. A.7): the items with at
least two of three annotators choosing the caption but not the foil (``mturk.caption >= 2``)."""

_VALSE = _DATA.valse
_VLC_LEAVES = _DATA.vl_checklist_leaves
_VLC = _DATA.vl_checklist
_WINOGROUND = _DATA.winoground

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
    for model, (obj, attr, rel, overall) in _VLC.items():
        for task, value in zip(_VLC_LEAVES, (*obj, *attr, *rel), strict=True):
            rows.append(
                {
                    "model": model,
                    "source": VL_CHECKLIST_TABLES,
                    "benchmark": "vl-checklist",
                    "task": task,
                    "accuracy": round(value / 100, 6),
                }
            )
        for task, value in zip(VL_CHECKLIST_AVERAGES, overall, strict=True):
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


KINDS: dict[str, str] = _DATA.kinds
"""Model kind of the published models, in the engine's names; every other one is an ITM head."""


def _with_kind(row: dict) -> dict:
    return {**row, "kind": KINDS.get(row["model"], "itm")}


REFERENCE_ROWS: list[dict] = [
    _with_kind(r)
    for r in (*_valse_rows(), *_vl_checklist_rows(), *_winoground_rows())
    if r["model"] != "Random Chance"
]
"""Every published row; Winoground's "Random Chance" row is :data:`WINOGROUND_CHANCE`."""


def neighbour_reference_rows(benchmark: str, task: str | None = None) -> list[dict]:
    """Published rows of ``benchmark`` (``valse``, ``vl-checklist``, ``winoground``), of one
    ``task`` when given (a config name, or ``"all"`` for the papers' averages)."""
    return [
        dict(r)
        for r in REFERENCE_ROWS
        if r["benchmark"] == benchmark and (task is None or r["task"] == task)
    ]
