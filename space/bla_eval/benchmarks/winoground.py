"""Winoground as a benchmark spec: two images x two captions per item, text / image / group score
from ``bla_metric.neighbours.winoground``.

Reads the dataset repo of ``python -m builders winoground`` (the Hub release's columns). Each item
has images (image_0, image_1), captions (caption_0, caption_1) and the truth matrix
((1, 0), (0, 1)); its score record holds the 2x2 matrix [image][caption].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import hub_ids
from bla_metric.neighbours import references, winoground
from bla_metric.neighbours.references import WINOGROUND_CHANCE, WINOGROUND_CONFIG
from bla_metric.schema import BENCHMARK_ROWS

from ..data import load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark

ROWS = BENCHMARK_ROWS["winoground"]

VIEWS = {
    "scores": (winoground.WINOGROUND_METRICS, "Winoground (%): text / image / group score"),
}
HEADLINE = {"scores": "group_score"}


def resolve_task(name: str) -> str:
    """The one config (``winoground``; ``test`` and ``all`` are accepted too)."""
    if name in (WINOGROUND_CONFIG, "test", "all"):
        return WINOGROUND_CONFIG
    raise ValueError(f"unknown Winoground task {name!r}: use {WINOGROUND_CONFIG}")


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The Winoground examples (the first ``limit``), in dataset order."""
    ds = load_split(data, config, split, ROWS.required)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    items = []
    for row in ds:
        images = tuple(ImageRef(image_key(row[c]), row[c]) for c in ("image_0", "image_1"))
        items.append(
            Item(
                benchmark="winoground",
                task=config,
                id=str(row["id"]),
                images=images,
                captions=(row["caption_0"], row["caption_1"]),
                labels=((1, 0), (0, 1)),
                caption_types=("caption_0", "caption_1"),
                meta={k: row[k] for k in ROWS.optional if k in row},
            )
        )
    return items


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Text, image and group score (strict comparisons; ties fail)."""
    metrics = winoground.winoground_metrics([r["scores"] for r in records])
    return {"n": len(records), "scores": metrics}


def reference_rows(view: str) -> list[dict[str, Any]]:
    """Winoground Table 3 (humans, chance and every model the paper reports)."""
    return references.reference_rows("winoground")


BENCHMARK = Benchmark(
    name="winoground",
    title="Winoground: visio-linguistic compositionality",
    hub_id=hub_ids.NEIGHBOUR_DATASETS["winoground"],
    task_names=lambda: (WINOGROUND_CONFIG,),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=WINOGROUND_CHANCE,
)
