"""SugarCrepe as a benchmark spec: one task per subset, image-to-text accuracy from
``bla_metric.neighbours.sugarcrepe``.

Reads the dataset repo of ``python -m builders sugarcrepe``: one COCO image per item, ``captions`` =
[positive, negative], ``labels`` = [1, 0]. An item is right when the positive caption scores
strictly above the negative (upstream ``main_eval.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric.neighbours import pairwise, references, sugarcrepe

from ..items import Item
from . import Benchmark, build_required
from .valse import pair_items

HUB_SOURCE = "RAIVNLab/sugar-crepe"
"""Where the authors publish the annotations (GitHub, ``data/<subset>.json``); the images are
COCO 2017 validation's."""

VIEWS = {
    "accuracy": (("accuracy",), "SugarCrepe (%): image-to-text accuracy (positive > negative)")
}
HEADLINE = {"accuracy": "accuracy"}
CHANCE = {"accuracy": 0.5}


def resolve_subset(name: str, subsets: Mapping[str, str], label: str) -> str:
    """A subset config (``replace_obj``) or its hyphenated name (``replace-obj``) -> config."""
    config = name.replace("-", "_")
    if config not in subsets:
        raise ValueError(f"unknown {label} subset {name!r}: use one of {', '.join(subsets)}")
    return config


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one subset (the first ``limit``), in dataset order."""
    return pair_items("sugarcrepe", data, config, split, limit, "filename", ("filename",))


def strict_summary(records: Sequence[Mapping[str, Any]], metric: str) -> dict[str, Any]:
    """The view ``metric``: every positive caption strictly above every negative (the share of
    items), the tied items and ``n``."""
    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    return {
        "n": len(records),
        metric: {
            metric: sugarcrepe.image_to_text_accuracy(scores, labels),
            "ties": pairwise.tied_pairs(scores, labels),
            "n": len(records),
        },
    }


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Image-to-text accuracy (strict), the tied items and ``n``."""
    return strict_summary(records, "accuracy")


def reference_rows(view: str) -> list[dict[str, Any]]:
    """The paper's evaluation table: people, two text-only models and 17 CLIP models."""
    return references.reference_rows("sugarcrepe") if view == "accuracy" else []


BENCHMARK = Benchmark(
    name="sugarcrepe",
    title="SugarCrepe: hard negatives of COCO captions",
    hub_id=HUB_SOURCE,
    task_names=lambda: tuple(sugarcrepe.SUGARCREPE_SUBSETS),
    resolve_task=lambda name: resolve_subset(name, sugarcrepe.SUGARCREPE_SUBSETS, "SugarCrepe"),
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=CHANCE,
    default_data=build_required("SugarCrepe", "sugarcrepe"),
)
