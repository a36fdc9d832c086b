"""ARO as a benchmark spec: VG-Relation, VG-Attribution, COCO-Order and Flickr30k-Order, macro
accuracy from ``bla_metric.neighbours.aro``.

Reads the dataset repo of ``python -m builders aro``: one image per item (the VG tasks' cropped
to the box), ``captions`` = the true caption first, then the false ones ([true, false]; the
Order tasks' caption and its four perturbations), ``labels`` likewise; the item id is
``<group>-<index>`` (the relation or attribute pair; ``order`` for every Order item), which is
what the macro accuracy averages over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import formulas
from bla_metric.neighbours import aro, pairwise

from ..items import Item
from . import Benchmark, build_required
from .valse import pair_items

HUB_SOURCE = "mertyg/vision-language-models-are-bows"
"""The authors' repository (GitHub; its loaders fetch the JSON files and images from Google
Drive)."""

VIEWS = {
    "macro": (
        ("macro_accuracy", "accuracy"),
        "ARO (%): macro accuracy (mean over relations / attribute pairs) / accuracy over items",
    ),
}
HEADLINE = {"macro": "macro_accuracy"}
CHANCE = {"macro_accuracy": 0.5, "accuracy": 0.5}


def resolve_task(name: str) -> str:
    """A task of :data:`bla_metric.neighbours.aro.ARO_TASKS` (also ``VG-Relation``,
    ``coco-order``...)."""
    config = name.lower().replace("-", "_")
    if config not in aro.ARO_TASKS:
        raise ValueError(f"unknown ARO task {name!r}: use one of {', '.join(aro.ARO_TASKS)}")
    return config


def group_of(item_id: str) -> str:
    """The relation or attribute pair of an item id ``<group>-<index>``."""
    return str(item_id).rsplit("-", 1)[0]


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one task (the first ``limit``), in dataset order."""
    return pair_items("aro", data, config, split, limit, "", ("image_path", "group"))


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Macro accuracy (upstream's rule of the task), pooled accuracy and the per-group table."""
    task = records[0]["task"] if records else "vg_relation"
    metrics = aro.aro_metrics(
        [r["scores"] for r in records],
        [r["labels"] for r in records],
        [group_of(r["id"]) for r in records],
        task,
    )
    return {
        "n": len(records),
        "macro": {k: metrics[k] for k in ("macro_accuracy", "accuracy", "groups", "n")},
        "per_group": metrics["per_group"],
    }


def item_stats(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> tuple[str, dict]:
    """Per item, the values whose means are the macro accuracy and the pooled accuracy."""
    outcomes = pairwise.pair_outcomes(
        [r["scores"] for r in records], [r["labels"] for r in records]
    )
    task = records[0]["task"] if records else "vg_relation"
    exclude, min_count = aro.aro_rule(task)
    groups = [group_of(r["id"]) for r in records]
    return formulas.MEAN, {
        "macro_accuracy": aro.macro_item_values(outcomes, groups, exclude, min_count),
        "accuracy": outcomes,
    }


BENCHMARK = Benchmark(
    name="aro",
    title="ARO: Attribution, Relation and Order",
    hub_id=HUB_SOURCE,
    task_names=lambda: tuple(aro.ARO_TASKS),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    chance=CHANCE,
    default_data=build_required("ARO", "aro"),
    task_label=lambda task: aro.ARO_TASKS.get(task, task),
    leaderboard_metrics=("macro_accuracy", "accuracy"),
    item_stats=item_stats,
)
