"""VL-CheckList as a benchmark spec: one task per taxonomy leaf, metrics from
``bla_metric.neighbours.vl_checklist``.

Reads the dataset repo of ``python -m builders vl-checklist``: one image per item, ``captions`` =
[POS, NEG], ``labels`` = [1, 0]; the item id is ``<corpus>-<index>`` (the upstream annotation file
and the position in it), which is how a leaf's accuracy is averaged over files and sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import formulas, hub_ids
from bla_metric.neighbours import pairwise, references, vl_checklist

from ..items import Item
from . import Benchmark
from .valse import pair_items

VIEWS = {
    "accuracy": (
        ("accuracy", "pooled_accuracy"),
        "VL-CheckList (%): accuracy (positive > negative; mean over files, then sources) / "
        "pooled over items",
    ),
}
HEADLINE = {"accuracy": "accuracy"}
CHANCE = {"accuracy": 0.5, "pooled_accuracy": 0.5}


def resolve_task(name: str) -> str:
    """A leaf config (``attribute_color``) or its taxonomy path (``Attribute/Color``) -> config."""
    for config, (key, path) in vl_checklist.VL_CHECKLIST_LEAVES.items():
        if name in (config, key, "/".join(path), "_".join(path).lower()):
            return config
    raise ValueError(
        f"unknown VL-CheckList leaf {name!r}: use one of "
        f"{', '.join(vl_checklist.VL_CHECKLIST_LEAVES)}"
    )


def task_label(config: str) -> str:
    """``Object/Size/Large`` for ``object_size_large``."""
    leaf = vl_checklist.VL_CHECKLIST_LEAVES.get(config)
    return "/".join(leaf[1]) if leaf else config


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one taxonomy leaf (the first ``limit``), in dataset order."""
    return pair_items(
        "vl-checklist", data, config, split, limit, "image_path", ("image_path", "corpus", "source")
    )


def corpus_of(item_id: str) -> str:
    """The upstream annotation file of an item id ``<corpus>-<index>``."""
    return str(item_id).rsplit("-", 1)[0]


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """The leaf's accuracy (upstream averaging) and its per-file accuracies."""
    leaf = vl_checklist.vl_checklist_leaf(
        [r["scores"] for r in records],
        [r["labels"] for r in records],
        [corpus_of(r["id"]) for r in records],
    )
    return {
        "n": len(records),
        "accuracy": {k: leaf[k] for k in ("accuracy", "pooled_accuracy", "ties", "n")},
        "per_corpus": leaf["per_corpus"],
    }


def item_stats(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> tuple[str, dict]:
    """Per item, the values whose means are the leaf's accuracy (upstream averaging:
    :func:`bla_metric.neighbours.vl_checklist.vl_checklist_item_values`) and its pooled accuracy."""
    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    corpora = [corpus_of(r["id"]) for r in records]
    return formulas.MEAN, {
        "accuracy": vl_checklist.vl_checklist_item_values(scores, labels, corpora),
        "pooled_accuracy": pairwise.pair_outcomes(scores, labels),
    }


def rollup(results: Mapping[str, Any]) -> dict[str, float]:
    """Object / Attribute / Relation / overall averages of a results document's leaves."""
    return vl_checklist.vl_checklist_rollup(
        {
            task: metrics["accuracy"]["accuracy"]
            for task, metrics in results["tasks"].items()
            if task in vl_checklist.VL_CHECKLIST_LEAVES
        }
    )


def reference_rows(view: str) -> list[dict[str, Any]]:
    """VL-CheckList Tables 2-5 rows (per leaf, and the Object / Attribute / Relation averages)."""
    return references.reference_rows("vl-checklist")


BENCHMARK = Benchmark(
    name="vl-checklist",
    title="VL-CheckList: objects, attributes and relations",
    hub_id=hub_ids.NEIGHBOUR_DATASETS["vl-checklist"],
    task_names=lambda: tuple(vl_checklist.VL_CHECKLIST_LEAVES),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=CHANCE,
    task_label=task_label,
    leaderboard_metrics=("accuracy", "pooled_accuracy"),
    item_stats=item_stats,
)
