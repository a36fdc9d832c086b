"""The metrics of BLA's neighbouring benchmarks, in plain NumPy: VALSE, VL-CheckList, Winoground.

Inputs follow :mod:`bla_metric.formulas`: one score list per datapoint (higher = more likely
true) and one 0/1 label list; Winoground takes one 2x2 score matrix per example (rows: images
0, 1; columns: captions 0, 1). Input checks are the ones of :mod:`bla_metric.formulas`; the
rank and binary views it already defines are reused, never rewritten. Results are plain floats.

Tie rules (a tie never counts as a success, as in BLA):
- VALSE ``acc_r``: the caption must score strictly above the foil. The paper's Table 2 caption
  says "correct if p(caption, img) > p(foil, img)"; its Appendix B formula writes
  ``phi(i, f) <= phi(i, c)`` (ties succeed). We follow the table and the main text; ``ties``
  counts the datapoints where they differ, so either reading can be recovered.
- VALSE ``auroc``: Mann-Whitney U over all caption scores (positives) against all foil scores
  (negatives), a tied (positive, negative) pair counting one half (the standard ROC convention).
- VALSE binary view (models with a probability): ``score >= 0.5`` is a "match"
  (:func:`bla_metric.formulas.threshold_labels`). ``p_c`` / ``p_f`` are the shares of captions /
  foils classified correctly (the paper's numbers satisfy acc = (p_c + p_f) / 2, so they are
  per-class recalls, whatever their name).
- VL-CheckList: a datapoint is correct when its positive text scores strictly above its negative
  one (paper eq. 1: ``p(x_p | I) > p(x_n | I)``; upstream ``evaluate.py`` uses the same ``>``).
- Winoground: text, image and group scores with strict ``>`` (paper eqs. 1-3); ties fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bla_metric.formulas import (
    _labelled,
    _scores,
    binary_metrics,
    nested_mean_values,
    ranking_metrics,
    threshold_labels,
)
from bla_metric.stats import significance

# ----------------------------------------------------------------------------- VALSE

VALSE_METRICS = ("acc_r", "auroc", "accuracy", "p_c", "p_f", "min_p_c_p_f")
"""Every VALSE metric, in the paper's order of importance (acc_r and AUROC are the main ones)."""

VALSE_THRESHOLD = 0.5
"""Binary decision of models with a match probability: ``p >= 0.5`` is "the text matches"."""


def pairwise_accuracy(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> float:
    """Share of datapoints where every true text scores strictly above every false one.

    VALSE's acc_r and VL-CheckList's accuracy (one caption, one foil per image). The same number
    as BLA's set accuracy, computed by :func:`bla_metric.formulas.ranking_metrics`.
    """
    return ranking_metrics(scores, labels)["set_accuracy"]


def tied_pairs(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> int:
    """Datapoints whose lowest true score equals their highest false score (undecided pairs)."""
    count = 0
    for _, values, y in _labelled(scores, labels, "predictions"):
        true_min = np.where(y, values, np.inf).min(axis=1)
        false_max = np.where(y, -np.inf, values).max(axis=1)
        count += int((true_min == false_max).sum())
    return count


def auroc(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> float:
    """Area under the ROC curve: P(score of a random true text > score of a random false one).

    All texts of all datapoints are pooled; ties between a true and a false text count 1/2
    (Mann-Whitney U / (n_pos * n_neg), with mid-ranks for ties).
    """
    blocks = _labelled(scores, labels, "predictions")
    values = np.concatenate([v[y] for _, v, y in blocks])
    positive = np.concatenate([np.ones(int(y.sum()), bool) for _, _, y in blocks])
    negatives = np.concatenate([v[~y] for _, v, y in blocks])
    values = np.concatenate([values, negatives])
    positive = np.concatenate([positive, np.zeros(len(negatives), bool)])
    ranks = _mid_ranks(values)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def _mid_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``, tied values sharing the mean of their ranks."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    ranks = np.empty(len(values))
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2
    return ranks


def valse_metrics(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    probabilistic: bool = False,
    threshold: float = VALSE_THRESHOLD,
) -> dict[str, Any]:
    """VALSE's metrics of one instrument (paper §5.1, Appendix B).

    ``scores``: one list per datapoint, typically ``[caption, foil]`` with ``labels`` ``[1, 0]``.
    Always: ``acc_r`` (strict), ``auroc``, ``ties`` (datapoints with caption == foil score),
    ``n``. With ``probabilistic`` (scores are match probabilities): ``accuracy``, ``p_c``,
    ``p_f`` and ``min_p_c_p_f`` from the binary decision ``score >= threshold``; contrastive
    scores have no threshold, so the paper reports only acc_r for CLIP and so do we.
    """
    result: dict[str, Any] = {
        "acc_r": pairwise_accuracy(scores, labels),
        "auroc": auroc(scores, labels),
        "ties": tied_pairs(scores, labels),
        "n": len(labels),
    }
    if probabilistic:
        result.update(valse_binary(threshold_labels(scores, threshold), labels))
    return result


def valse_binary(
    predicted_labels: Sequence[Sequence[int]], labels: Sequence[Sequence[int]]
) -> dict[str, float]:
    """VALSE's binary view from hard decisions (1 = "the text matches the image"):
    ``accuracy``, ``p_c`` (share of captions judged matching), ``p_f`` (share of foils judged
    not matching) and ``min_p_c_p_f``; from :func:`bla_metric.formulas.binary_metrics`."""
    binary = binary_metrics(predicted_labels, labels)
    p_c, p_f = binary["recall_true"], binary["recall_false"]
    return {"accuracy": binary["accuracy"], "p_c": p_c, "p_f": p_f, "min_p_c_p_f": min(p_c, p_f)}


# ----------------------------------------------------------------------------- VL-CheckList

VL_CHECKLIST_CORPUS: dict[str, dict[str, list[str]]] = {
    "large": {
        "vg": ["Object_Size_large_vg_obj", "Object_Size_large_vg_subj"],
        "swig": [f"Object_Size_large_swig_{r}" for r in ("agent", "destination", "item", "tool")],
        "hake": ["Object_Size_large_hake"],
    },
    "medium": {
        "vg": ["Object_Size_medium_vg_obj", "Object_Size_medium_vg_subj"],
        "swig": [f"Object_Size_medium_swig_{r}" for r in ("agent", "destination", "item", "tool")],
        "hake": ["Object_Size_medium_hake"],
    },
    "small": {
        "vg": ["Object_Size_small_vg_obj", "Object_Size_small_vg_subj"],
        "swig": [f"Object_Size_small_swig_{r}" for r in ("agent", "destination", "item", "tool")],
        "hake": ["Object_Size_small_hake"],
    },
    "center": {
        "vg": ["Object_Location_center_vg_obj", "Object_Location_center_vg_subj"],
        "swig": [
            f"Object_Location_center_swig_{r}" for r in ("agent", "destination", "item", "tool")
        ],
        "hake": ["Object_Location_center_hake"],
    },
    "mid": {
        "vg": ["Object_Location_mid_vg_obj", "Object_Location_mid_vg_subj"],
        "swig": [f"Object_Location_mid_swig_{r}" for r in ("agent", "destination", "item", "tool")],
        "hake": ["Object_Location_mid_hake"],
    },
    "margin": {
        "vg": ["Object_Location_margin_vg_obj", "Object_Location_margin_vg_subj"],
        "swig": [
            f"Object_Location_margin_swig_{r}" for r in ("agent", "destination", "item", "tool")
        ],
        "hake": ["Object_Location_margin_hake"],
    },
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


def pair_outcomes(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> np.ndarray:
    """Each datapoint's 0/1 outcome of :func:`pairwise_accuracy` (every true text strictly
    above every false one), as floats."""
    return np.asarray(significance.datapoint_stats(scores, labels)["set_accuracy"], float)


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


# ----------------------------------------------------------------------------- Winoground

WINOGROUND_METRICS = ("text_score", "image_score", "group_score")


def _matrices(scores: Any) -> np.ndarray:
    """Validated Winoground scores as an array (n, 2, 2): [example, image, caption]."""
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise ValueError("predictions must be a list with one 2x2 score matrix per example")
    flat = []
    for i, matrix in enumerate(scores):
        array = np.asarray(matrix, dtype=object)
        if array.shape != (2, 2):
            raise ValueError(
                f"datapoint {i}: predictions must be a 2x2 matrix [image][caption], "
                f"got shape {array.shape}"
            )
        flat.append([matrix[0][0], matrix[0][1], matrix[1][0], matrix[1][1]])
    _scores(flat, "predictions")  # numbers, finite; errors name the datapoint
    return np.asarray(flat, dtype=float).reshape(-1, 2, 2)


def winoground_outcomes(scores: Any) -> dict[str, np.ndarray]:
    """Per example: text, image and group success (booleans, strict comparisons).

    text: s(C0,I0) > s(C1,I0) and s(C1,I1) > s(C0,I1); image: s(C0,I0) > s(C0,I1) and
    s(C1,I1) > s(C1,I0); group: both. ``scores[k][i][c]`` = s(caption c, image i).
    """
    s = _matrices(scores)
    text = (s[:, 0, 0] > s[:, 0, 1]) & (s[:, 1, 1] > s[:, 1, 0])
    image = (s[:, 0, 0] > s[:, 1, 0]) & (s[:, 1, 1] > s[:, 0, 1])
    return {"text_score": text, "image_score": image, "group_score": text & image}


def winoground_metrics(scores: Any, groups: Sequence[Any] | None = None) -> dict[str, Any]:
    """Text, image and group score (shares of examples) and ``n``; ``per_group`` (e.g. by the
    ``collapsed_tag`` Object / Relation / Both) when ``groups`` gives one label per example."""
    outcomes = winoground_outcomes(scores)
    n = len(outcomes["text_score"])
    result: dict[str, Any] = {k: float(v.mean()) for k, v in outcomes.items()}
    result["n"] = n
    if groups is not None:
        if len(groups) != n:
            raise ValueError(f"groups has {len(groups)} labels but there are {n} examples")
        names = np.asarray([str(g) for g in groups])
        result["per_group"] = {
            name: {
                **{k: float(v[names == name].mean()) for k, v in outcomes.items()},
                "n": int((names == name).sum()),
            }
            for name in sorted(set(names.tolist()))
        }
    return result
