"""SugarCrepe++ as a benchmark spec: one task per subset, ITT from ``bla_metric.compositional``.

Reads the dataset repo of ``python -m builders sugarcrepe-pp``: one COCO image per item,
``captions`` = [positive, second positive, negative], ``labels`` = [1, 1, 0]. ITT: both positives
score strictly above the negative. The paper's text-only TOT compares the captions' text
embeddings with each other, which no scorer of the engine gives; it is not computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import compositional

from ..items import Item
from . import Benchmark, build_required
from .sugarcrepe import resolve_subset, strict_summary
from .valse import pair_items

HUB_SOURCE = "Aman-J/SugarCrepe_pp"
"""The authors' Hub release (text only, ``data/<subset>.json``); images are COCO 2017 val's."""

VIEWS = {"itt": (("itt",), "SugarCrepe++ (%): ITT (both positives > negative)")}
HEADLINE = {"itt": "itt"}
CHANCE = {"itt": 1 / 3}
"""A random order of the three captions puts the negative last one time in three."""


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one subset (the first ``limit``), in dataset order."""
    return pair_items("sugarcrepe-pp", data, config, split, limit, "filename", ("filename",))


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """ITT (strict), the items whose lowest positive ties the negative, and ``n``."""
    return strict_summary(records, "itt")


BENCHMARK = Benchmark(
    name="sugarcrepe-pp",
    title="SugarCrepe++: two positives and a hard negative",
    hub_id=HUB_SOURCE,
    task_names=lambda: tuple(compositional.SUGARCREPE_PP_SUBSETS),
    resolve_task=lambda name: resolve_subset(
        name, compositional.SUGARCREPE_PP_SUBSETS, "SugarCrepe++"
    ),
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    chance=CHANCE,
    default_data=build_required("SugarCrepe++", "sugarcrepe-pp"),
)
