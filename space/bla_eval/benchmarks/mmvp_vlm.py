"""MMVP-VLM as a benchmark spec: pairs of CLIP-blind images, pair accuracy per visual pattern
from ``bla_metric.neighbours.mmvp_vlm``.

Reads the dataset repo of ``python -m builders mmvp-vlm``: two images and two statements per
item, statement ``k`` true of image ``k``; each statement is asked as upstream asks it, ``a photo
of <statement>``. The item id is the pair's position, whose ``// 15`` is its visual pattern.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import formulas
from bla_metric.neighbours import aro, mmvp_vlm, references
from bla_metric.schema import BENCHMARK_ROWS

from ..data import load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark, build_required

HUB_SOURCE = "MMVP/MMVP_VLM"
"""The authors' Hub repo (MIT; ``Questions.csv`` and ``MLLM_VLM Images/``)."""
CONFIG = "mmvp_vlm"
PREFIX = "a photo of "
"""Upstream ``evaluate_vlm.py`` asks ``'a photo of ' + statement``."""

VIEWS = {
    "pairs": (("pair_accuracy",), "MMVP-VLM (%): pair accuracy (mean over the visual patterns)")
}
HEADLINE = {"pairs": "pair_accuracy"}
CHANCE = {"pair_accuracy": 0.25}
"""Each statement picks its image with probability 1/2."""


def resolve_task(name: str) -> str:
    """The one config (``mmvp_vlm``; ``mmvp``, ``test`` and ``all`` are accepted too)."""
    if name in (CONFIG, "mmvp-vlm", "mmvp", "test", "all"):
        return CONFIG
    raise ValueError(f"unknown MMVP-VLM task {name!r}: use {CONFIG}")


def pattern_of(item_id: str) -> str:
    """The visual pattern of the pair at position ``item_id`` (15 pairs per pattern)."""
    try:
        return mmvp_vlm.MMVP_PATTERNS[int(item_id) // 15]
    except (ValueError, IndexError) as err:
        raise ValueError(f"MMVP-VLM item id {item_id!r} is no pair position 0-134") from err


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The pairs (the first ``limit``), in dataset order."""
    ds = load_split(data, config, split, BENCHMARK_ROWS["mmvp-vlm"].required)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    items = []
    for row in ds:
        pattern_of(row["id"])
        items.append(
            Item(
                benchmark="mmvp-vlm",
                task=config,
                id=str(row["id"]),
                images=tuple(ImageRef(image_key(row[c]), row[c]) for c in ("image_0", "image_1")),
                captions=(PREFIX + row["caption_0"], PREFIX + row["caption_1"]),
                labels=((1, 0), (0, 1)),
                caption_types=("statement_0", "statement_1"),
                meta={k: row[k] for k in ("pattern", "question_ids") if k in row},
            )
        )
    return items


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Pair accuracy per pattern and their mean."""
    metrics = mmvp_vlm.mmvp_metrics(
        [r["scores"] for r in records], [pattern_of(r["id"]) for r in records]
    )
    return {
        "n": len(records),
        "pairs": {"pair_accuracy": metrics["pair_accuracy"], "n": metrics["n"]},
        "per_pattern": metrics["per_pattern"],
    }


def item_stats(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> tuple[str, dict]:
    """Per pair, the values whose mean is the mean over patterns of their pair accuracy."""
    outcomes = mmvp_vlm.mmvp_pair_outcomes([r["scores"] for r in records])
    patterns = [pattern_of(r["id"]) for r in records]
    return formulas.MEAN, {"pair_accuracy": aro.macro_item_values(outcomes, patterns)}


def reference_rows(view: str) -> list[dict[str, Any]]:
    """The paper's MMVP-VLM table (ten CLIP models; per pattern in
    ``bla_metric.neighbours.references.MMVP_PER_PATTERN``)."""
    return references.reference_rows("mmvp-vlm") if view == "pairs" else []


BENCHMARK = Benchmark(
    name="mmvp-vlm",
    title="MMVP-VLM: CLIP-blind image pairs",
    hub_id=HUB_SOURCE,
    task_names=lambda: (CONFIG,),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=CHANCE,
    default_data=build_required("MMVP-VLM", "mmvp-vlm"),
    item_stats=item_stats,
)
