"""VALSE's metrics (Parcalabescu et al., ACL 2022), in plain NumPy; results are plain floats.

Inputs follow :mod:`bla_metric.formulas` (one score list per datapoint, one 0/1 label list).
Tie rules (a tie never counts as a success, as in BLA):
- ``acc_r``: the caption must score strictly above the foil. The paper's Table 2 caption says
  "correct if p(caption, img) > p(foil, img)"; its Appendix B formula writes
  ``phi(i, f) <= phi(i, c)`` (ties succeed). We follow the table and the main text; ``ties``
  counts the datapoints where they differ, so either reading can be recovered.
- ``auroc``: Mann-Whitney U over all caption scores (positives) against all foil scores
  (negatives), a tied (positive, negative) pair counting one half (the standard ROC convention).
- Binary view (models with a probability): ``score >= 0.5`` is a "match"
  (:func:`bla_metric.formulas.threshold_labels`). ``p_c`` / ``p_f`` are the shares of captions /
  foils classified correctly (the paper's numbers satisfy acc = (p_c + p_f) / 2, so they are
  per-class recalls, whatever their name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bla_metric.formulas import _labelled, binary_metrics, threshold_labels
from bla_metric.neighbours.pairwise import pairwise_accuracy, tied_pairs

VALSE_METRICS = ("acc_r", "auroc", "accuracy", "p_c", "p_f", "min_p_c_p_f")
"""Every VALSE metric, in the paper's order of importance (acc_r and AUROC are the main ones)."""


VALSE_THRESHOLD = 0.5
"""Binary decision of models with a match probability: ``p >= 0.5`` is "the text matches"."""


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
