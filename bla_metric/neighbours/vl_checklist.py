"""VL-CheckList's metrics (Zhao et al., 2022), in plain NumPy: per taxonomy leaf and up the
taxonomy. A datapoint is correct when its positive text scores strictly above its negative one
(paper eq. 1: ``p(x_p | I) > p(x_n | I)``; upstream ``evaluate.py`` uses the same ``>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bla_metric.formulas import nested_mean_values
from bla_metric.neighbours.pairwise import pair_outcomes, pairwise_accuracy, tied_pairs


def _object_corpora(prefix: str) -> dict[str, list[str]]:
    """The annotation files of an Object leaf (``Object_Size_large``...), per data source."""
    return {
        "vg": [f"{prefix}_vg_obj", f"{prefix}_vg_subj"],
        "swig": [f"{prefix}_swig_{r}" for r in ("agent", "destination", "item", "tool")],
        "hake": [f"{prefix}_hake"],
    }


VL_CHECKLIST_CORPUS: dict[str, dict[str, list[str]]] = {
    **{size: _object_corpora(f"Object_Size_{size}") for size in ("large", "medium", "small")},
    **{place: _object_corpora(f"Object_Location_{place}") for place in ("center", "mid", "margin")},
    "color": {"vg": ["Attribute_color_vg"], "vaw": ["Attribute_color_vaw"]},
    "material": {"vg": ["Attribute_material_vg"], "vaw": ["Attribute_material_vaw"]},
    "action_a": {"vg": ["Attribute_action_vg"], "vaw": ["Attribute_action_vaw"]},
    "size": {"vg": ["Attribute_size_vg"], "vaw": ["Attribute_size_vaw"]},
    "state": {"vg": ["Attribute_state_vg"], "vaw": ["Attribute_state_vaw"]},
    "action_r": {
        "vg": ["Relation_action_vg"],
        "swig": ["Relation_action_swig"],
        "hake": ["Relation_action_hake"],
    },
    "spatial": {"vg": ["Relation_spatial_vg"]},
}
"""Upstream ``corpus.json`` (om-ai-lab/VL-CheckList @ 6f8d6a3): taxonomy leaf -> data source ->
the annotation files ("corpus names") that make up that leaf."""


VL_CHECKLIST_LEAVES: dict[str, tuple[str, tuple[str, ...]]] = {
    "object_size_large": ("large", ("Object", "Size", "Large")),
    "object_size_medium": ("medium", ("Object", "Size", "Medium")),
    "object_size_small": ("small", ("Object", "Size", "Small")),
    "object_location_center": ("center", ("Object", "Location", "Center")),
    "object_location_mid": ("mid", ("Object", "Location", "Mid")),
    "object_location_margin": ("margin", ("Object", "Location", "Margin")),
    "attribute_color": ("color", ("Attribute", "Color")),
    "attribute_material": ("material", ("Attribute", "Material")),
    "attribute_size": ("size", ("Attribute", "Size")),
    "attribute_state": ("state", ("Attribute", "State")),
    "attribute_action": ("action_a", ("Attribute", "Action")),
    "relation_action": ("action_r", ("Relation", "Action")),
    "relation_spatial": ("spatial", ("Relation", "Spatial")),
}
"""Config name -> (upstream corpus.json key, path in the taxonomy), in the paper's order."""


def corpus_source(corpus: str) -> tuple[str, str]:
    """(config, data source) of an upstream corpus name, e.g. ``Attribute_color_vaw``."""
    for config, (key, _) in VL_CHECKLIST_LEAVES.items():
        for source, names in VL_CHECKLIST_CORPUS[key].items():
            if corpus in names:
                return config, source
    raise ValueError(f"unknown VL-CheckList corpus {corpus!r}")


def vl_checklist_leaf(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    corpora: Sequence[str],
) -> dict[str, Any]:
    """Accuracy of one taxonomy leaf, averaged the way upstream does (``radar.py``).

    ``corpora``: the corpus name (annotation file) of each datapoint. Accuracy per corpus
    (positive strictly above negative), then the mean over the corpora of each data source
    (vg, vaw, swig, hake), then the mean over sources. Also ``pooled_accuracy`` (over all
    datapoints), ``per_corpus`` ({corpus: {"accuracy", "n"}}), ``ties`` and ``n``.
    """
    if len(corpora) != len(labels):
        raise ValueError(f"corpora has {len(corpora)} names but there are {len(labels)} datapoints")
    names = np.asarray([str(c) for c in corpora])
    per_corpus: dict[str, dict[str, float | int]] = {}
    by_source: dict[str, list[float]] = {}
    for corpus in sorted(set(names.tolist())):
        index = np.flatnonzero(names == corpus).tolist()
        accuracy = pairwise_accuracy([scores[i] for i in index], [labels[i] for i in index])
        per_corpus[corpus] = {"accuracy": accuracy, "n": len(index)}
        _, source = corpus_source(corpus)
        by_source.setdefault(source, []).append(accuracy)
    return {
        "accuracy": float(np.mean([np.mean(v) for v in by_source.values()])),
        "pooled_accuracy": pairwise_accuracy(scores, labels),
        "ties": tied_pairs(scores, labels),
        "per_corpus": per_corpus,
        "n": len(labels),
    }


def vl_checklist_item_values(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    corpora: Sequence[str],
) -> np.ndarray:
    """Per datapoint, a value whose mean over the leaf is :func:`vl_checklist_leaf`'s accuracy:
    its 0/1 outcome (positive strictly above negative) weighted as upstream averages, over the
    corpora of each data source, then over the sources
    (:func:`bla_metric.formulas.nested_mean_values`)."""
    if len(corpora) != len(labels):
        raise ValueError(f"corpora has {len(corpora)} names but there are {len(labels)} datapoints")
    names = [str(c) for c in corpora]
    sources = [corpus_source(c)[1] for c in names]
    return nested_mean_values(pair_outcomes(scores, labels), sources, names)


def vl_checklist_rollup(leaf_accuracy: Mapping[str, float]) -> dict[str, float]:
    """Averages up the taxonomy: {"Object/Size": ..., "Object": ..., ..., "overall": ...}.

    ``leaf_accuracy``: config name (``object_size_large``...) -> accuracy of that leaf. Each
    inner node is the unweighted mean of its children present; ``overall`` is the mean of
    Object, Attribute and Relation (paper Table 2: 71.65 = mean(82.83, 67.93, 64.19) for CLIP;
    Table 3's Object average is the mean of its six size/location leaves).
    """
    for config in leaf_accuracy:
        if config not in VL_CHECKLIST_LEAVES:
            raise ValueError(f"unknown VL-CheckList leaf {config!r}")
    nodes: dict[tuple[str, ...], list[float]] = {}

    def mean_of(path: tuple[str, ...]) -> float | None:
        children = {
            p[: len(path) + 1]
            for _, (_, p) in VL_CHECKLIST_LEAVES.items()
            if p[: len(path)] == path and len(p) > len(path)
        }
        values = []
        for child in sorted(children):
            leaf = [c for c, (_, p) in VL_CHECKLIST_LEAVES.items() if p == child]
            value = leaf_accuracy.get(leaf[0]) if leaf else mean_of(child)
            if value is not None:
                values.append(float(value))
        if not values:
            return None
        nodes[path] = values
        return float(np.mean(values))

    out: dict[str, float] = {}
    overall = mean_of(())
    for path in sorted(nodes, key=lambda p: (len(p), p)):
        if path:
            out["/".join(path)] = float(np.mean(nodes[path]))
    if overall is not None:
        out["overall"] = overall
    return out
