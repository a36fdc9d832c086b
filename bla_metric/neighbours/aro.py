"""ARO's metrics (Yuksekgonul et al., ICLR 2023; mertyg/vision-language-models-are-bows), in
plain NumPy, and the macro accuracy (mean over groups) that MMVP-VLM shares.

VG-Relation and VG-Attribution are macro accuracies, the mean over relations (the notebook
"Replicate ARO!" drops :data:`ARO_SYMMETRIC_RELATIONS`) or over attribute pairs with at least
:data:`ARO_MIN_ATTRIBUTE_COUNT` items (``VG_Attribution.evaluate_scores``) of the share of items
whose true caption scores above the false one. Upstream takes ``argmax([false, true])``, so a tie
picks the false caption: the same strict rule. COCO-Order and Flickr30k-Order: the share of
captions scored strictly above their four perturbations (``Precision@1``; upstream's ``argmax``
gives a tie to the caption, listed first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from bla_metric.neighbours.pairwise import pair_outcomes

ARO_TASKS: dict[str, str] = {
    "vg_relation": "VG-Relation",
    "vg_attribution": "VG-Attribution",
    "coco_order": "COCO-Order",
    "flickr30k_order": "Flickr30k-Order",
}
"""ARO's tasks -> title: two Visual Genome tasks, two caption-order tasks."""


ARO_ORDER_GROUP = "order"
"""The one group of an Order task's items: its macro accuracy is the accuracy over items, the
authors' ``Precision@1`` (the caption strictly above its four perturbations; upstream's
``argmax`` would give a tie to the caption, listed first)."""


ARO_MIN_ATTRIBUTE_COUNT = 25
"""VG-Attribution keeps the attribute pairs with at least this many items (upstream
``VG_Attribution.evaluate_scores``)."""


ARO_SYMMETRIC_RELATIONS: frozenset[str] = frozenset(
    """adjusting|attached to|between|bigger than|biting|boarding|brushing|chewing|cleaning|climbing|
close to|coming from|coming out of|contain|crossing|dragging|draped over|drinking|drinking from|
driving|driving down|driving on|eating from|eating in|enclosing|exiting|facing|filled with|
floating in|floating on|flying|flying above|flying in|flying over|flying through|full of|
going down|going into|going through|grazing in|growing in|growing on|guiding|hanging from|
hanging in|hanging off|hanging over|higher than|holding onto|hugging|in between|jumping off|
jumping on|jumping over|kept in|larger than|leading|leaning over|leaving|licking|longer than|
looking in|looking into|looking out|looking over|looking through|lying next to|lying on top of|
making|mixed with|mounted on|moving|on the back of|on the edge of|on the front of|
on the other side of|opening|painted on|parked at|parked beside|parked by|parked in|
parked in front of|parked near|parked next to|perched on|petting|piled on|playing|playing in|
playing on|playing with|pouring|reaching for|reading|reflected on|riding on|running in|
running on|running through|seen through|sitting behind|sitting beside|sitting by|
sitting in front of|sitting near|sitting next to|sitting under|skiing down|skiing on|sleeping in|
sleeping on|smiling at|sniffing|splashing|sprinkled on|stacked on|standing against|
standing around|standing behind|standing beside|standing in front of|standing near|
standing next to|staring at|stuck in|surrounding|swimming in|swinging|talking to|topped with|
touching|traveling down|traveling on|tying|typing on|underneath|wading in|waiting for|
walking across|walking by|walking down|walking next to|walking through|working in|working on|
worn on|wrapped around|wrapped in|by|of|near|next to|with|beside|on the side of|around""".replace(
        "\n", ""
    ).split("|")
)
"""The relations the ARO notebook "Replicate ARO! VG-Relation, VG-Attribution" (mertyg/
vision-language-models-are-bows @ 42dbb5e) leaves out of VG-Relation's macro accuracy."""


def macro_accuracy(
    outcomes: Sequence[float],
    groups: Sequence[str],
    exclude: Iterable[str] = (),
    min_count: int = 1,
) -> dict[str, Any]:
    """ARO's macro accuracy: per group (relation, attribute pair) the mean outcome, then the mean
    over the groups kept (not in ``exclude``, at least ``min_count`` items).

    Returns ``accuracy`` (NaN when no group is kept), ``per_group`` ({group: {"accuracy", "n"}}
    of the kept groups), ``groups`` (how many), ``n`` (items) and ``n_kept`` (items of kept
    groups)."""
    if len(outcomes) != len(groups):
        raise ValueError(f"groups has {len(groups)} names but there are {len(outcomes)} items")
    values = np.asarray(outcomes, float)
    names = np.asarray([str(g) for g in groups])
    left_out = set(exclude)
    per_group: dict[str, dict[str, float | int]] = {}
    for name in sorted(set(names.tolist()) - left_out):
        mask = names == name
        if int(mask.sum()) >= min_count:
            per_group[name] = {"accuracy": float(values[mask].mean()), "n": int(mask.sum())}
    accuracies = [g["accuracy"] for g in per_group.values()]
    return {
        "accuracy": float(np.mean(accuracies)) if accuracies else float("nan"),
        "per_group": per_group,
        "groups": len(per_group),
        "n": len(values),
        "n_kept": int(sum(g["n"] for g in per_group.values())),
    }


def macro_item_values(
    outcomes: Sequence[float],
    groups: Sequence[str],
    exclude: Iterable[str] = (),
    min_count: int = 1,
) -> np.ndarray:
    """Per item, a value whose mean over all items is :func:`macro_accuracy`'s accuracy: the
    item's outcome times ``n / (G * n_g)`` (``G`` kept groups, ``n_g`` items of its group), 0
    for an item of a group left out. Paired tests and rank sets take these as any per-item
    values."""
    summary = macro_accuracy(outcomes, groups, exclude, min_count)
    kept = summary["per_group"]
    n = len(outcomes)
    weights = np.asarray(
        [n / (len(kept) * kept[str(g)]["n"]) if str(g) in kept else 0.0 for g in groups]
    )
    return np.asarray(outcomes, float) * weights


def aro_metrics(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    groups: Sequence[str],
    task: str,
) -> dict[str, Any]:
    """ARO's ``macro_accuracy`` of one task (:data:`ARO_TASKS`) and the ``accuracy`` pooled over
    every item (upstream's VG-Relation ``Accuracy``; the Order tasks' ``Precision@1``, which their
    one group makes the macro accuracy too)."""
    outcomes = pair_outcomes(scores, labels)
    macro = macro_accuracy(outcomes, groups, *aro_rule(task))
    return {
        "macro_accuracy": macro["accuracy"],
        "accuracy": float(outcomes.mean()) if len(outcomes) else float("nan"),
        "groups": macro["groups"],
        "per_group": macro["per_group"],
        "n": len(outcomes),
    }


def aro_rule(task: str) -> tuple[frozenset[str], int]:
    """(groups left out, minimum items per group) of an ARO task's macro accuracy."""
    if task == "vg_relation":
        return ARO_SYMMETRIC_RELATIONS, 1
    if task == "vg_attribution":
        return frozenset(), ARO_MIN_ATTRIBUTE_COUNT
    if task in ("coco_order", "flickr30k_order"):
        return frozenset(), 1
    raise ValueError(f"unknown ARO task {task!r}: use one of {', '.join(ARO_TASKS)}")
