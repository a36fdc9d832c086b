"""The rule the neighbouring benchmarks share, in plain NumPy: a datapoint is right when every
true text scores strictly above every false one (a tie never counts, as in BLA).

Inputs follow :mod:`bla_metric.formulas`: one score list per datapoint (higher = more likely
true) and one 0/1 label list; its input checks and rank views are reused, never rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bla_metric.formulas import _labelled, ranking_metrics
from bla_metric.stats import significance


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


def pair_outcomes(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> np.ndarray:
    """Each datapoint's 0/1 outcome of :func:`pairwise_accuracy` (every true text strictly
    above every false one), as floats."""
    return np.asarray(significance.datapoint_stats(scores, labels)["set_accuracy"], float)
