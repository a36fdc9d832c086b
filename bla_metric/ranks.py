"""A leaderboard with statistics: rank intervals, groups of tied models, the smallest difference
the data can detect.

- :func:`rank_intervals`: each model's rank on bootstrap resamples of the datapoints, drawn
  jointly for all models (every resample scores all models on the same datapoints), and the
  2.5 / 97.5 percentiles of those ranks. Rank 1 is the best; a model's rank on one resample is
  1 + the number of models strictly better on it.
- :func:`holm`: Holm's step-down correction of a family of p-values.
- :func:`tied_groups`: models in score order, grouped where no pair of a group differs
  significantly after the correction (a compact letter display: a model may be in two groups).
- :func:`minimum_detectable_effect`: the smallest true difference a paired two-sided test at
  level ``alpha`` detects with probability ``power`` on n datapoints:
  ``(z_{1-alpha/2} + z_{power}) * sd(d) / sqrt(n)``, d the per-datapoint paired difference.

The metrics come from :mod:`bla_metric.formulas` (per-datapoint statistics and their
aggregation, resampled with :func:`bla_metric.formulas.resampled`), the paired test from
:mod:`bla_metric.significance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import sqrt
from statistics import NormalDist
from typing import Any

import numpy as np

from . import formulas, significance

ALPHA = 0.05
POWER = 0.8


def rank_intervals(
    stats: Sequence[dict[str, np.ndarray]],
    mode: str,
    metric: str,
    resamples: int = 2000,
    seed: int = 0,
    higher_is_better: bool = True,
) -> list[dict[str, Any]]:
    """Per model (in the order of ``stats``, per-datapoint statistics of the same datapoints):
    ``rank`` (on all datapoints), ``interval`` [low, high] (95% percentile interval of the
    bootstrap ranks, whole numbers) and ``ci`` [low, high] of the metric itself."""
    if len(stats) < 2:
        raise ValueError("rank intervals need at least two models")
    resamples = significance._check_resamples(resamples)
    sign = 1.0 if higher_is_better else -1.0
    observed = np.array([formulas._aggregate(mode, s)[metric] for s in stats])
    draws = np.stack([d[metric] for d in formulas.resampled(mode, stats, resamples, seed)])
    ranks = _ranks(sign * draws)  # (models, resamples)
    point = _ranks(sign * observed[:, None])[:, 0]
    out = []
    for m in range(len(stats)):
        low, high = np.quantile(ranks[m], [0.025, 0.975], method="inverted_cdf")
        ci_low, ci_high = np.percentile(draws[m], [2.5, 97.5])
        out.append(
            {
                "value": float(observed[m]),
                "ci": [float(ci_low), float(ci_high)],
                "rank": int(point[m]),
                "interval": [int(low), int(high)],
            }
        )
    return out


def _ranks(values: np.ndarray) -> np.ndarray:
    """Rank of each row in each column (values (models, columns), higher is better): 1 + the
    number of rows strictly above it."""
    return 1 + (values[None, :, :] > values[:, None, :]).sum(axis=1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (same order): the k-th smallest is multiplied by (m - k + 1),
    made monotone and capped at 1."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty_like(p)
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        adjusted[i] = running
    return [float(v) for v in adjusted]


def pairwise_tests(
    stats: Sequence[dict[str, np.ndarray]],
    mode: str,
    metric: str,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[tuple[int, int], dict[str, float]]:
    """{(i, j): {"difference", "p_value", "p_holm"}} for every pair of models i < j: the paired
    bootstrap test of :func:`bla_metric.significance.paired_bootstrap_stats` on ``metric``, and
    its Holm-corrected p-value over all pairs."""
    pairs = list(combinations(range(len(stats)), 2))
    tests = {}
    for i, j in pairs:
        result = significance.paired_bootstrap_stats(stats[i], stats[j], mode, resamples, seed)
        tests[(i, j)] = {
            "difference": result[metric]["difference"],
            "p_value": result[metric]["p_value"],
        }
    for test, adjusted in zip(
        tests.values(), holm([t["p_value"] for t in tests.values()]), strict=True
    ):
        test["p_holm"] = adjusted
    return tests


def tied_groups(
    values: Sequence[float],
    tests: dict[tuple[int, int], dict[str, float]],
    alpha: float = ALPHA,
    higher_is_better: bool = True,
) -> list[list[int]]:
    """Groups of statistically tied models: in score order (best first), every maximal run of
    consecutive models of which no pair differs at ``alpha`` (Holm-corrected p-values of
    ``tests``). Groups are listed best first; a model lies in one group or in several
    overlapping ones."""
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(range(len(values)), key=lambda m: (-sign * values[m], m))

    def tied(a: int, b: int) -> bool:
        return tests[(min(a, b), max(a, b))]["p_holm"] >= alpha

    groups: list[list[int]] = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and all(
            tied(order[k], order[end + 1]) for k in range(start, end + 1)
        ):
            end += 1
        group = order[start : end + 1]
        if not groups or not set(group) <= set(groups[-1]):
            groups.append(group)
    return groups


def minimum_detectable_effect(
    sd: float, n: int, alpha: float = ALPHA, power: float = POWER
) -> float:
    """``(z_{1-alpha/2} + z_{power}) * sd / sqrt(n)``: the smallest true mean paired difference
    a two-sided test at level ``alpha`` finds with probability ``power`` (normal
    approximation), with ``sd`` the standard deviation of the per-datapoint differences."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    normal = NormalDist()
    return float((normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) * sd / sqrt(n))


def per_datapoint(mode: str, metric: str, stats: dict[str, np.ndarray]) -> np.ndarray:
    """The per-datapoint value whose mean is ``metric`` (sentence accuracy: the share of a
    datapoint's sentences placed right; set accuracy / error: 0 or 1). Binary-view metrics
    that are ratios of sums have none: ValueError."""
    if mode == "ranking" and metric == "sentence_accuracy":
        return np.asarray(stats["correct"], float) / np.asarray(stats["sentences"], float)
    if metric in stats:
        return np.asarray(stats[metric], float)
    if mode == "binary" and metric == "accuracy":
        tp, tn = (np.asarray(stats[k], float) for k in ("tp", "tn"))
        total = sum(np.asarray(stats[k], float) for k in ("tp", "fp", "tn", "fn"))
        return (tp + tn) / np.where(total == 0, 1, total)
    raise ValueError(f"{mode} {metric} has no per-datapoint value")


def detectable_difference(
    stats: Sequence[dict[str, np.ndarray]],
    mode: str,
    metric: str,
    alpha: float = ALPHA,
    power: float = POWER,
) -> dict[str, float]:
    """The minimum detectable effect on these models' datapoints: ``sd`` is the root mean square
    over all pairs of models of the standard deviation of their per-datapoint differences
    (:func:`per_datapoint`); with ``n``, ``alpha``, ``power`` and the effect ``mde``."""
    values = [per_datapoint(mode, metric, s) for s in stats]
    n = len(values[0])
    variances = [np.var(a - b, ddof=1) if n > 1 else 0.0 for a, b in combinations(values, 2)]
    sd = float(sqrt(np.mean(variances))) if variances else 0.0
    return {
        "n": n,
        "sd": sd,
        "alpha": alpha,
        "power": power,
        "mde": minimum_detectable_effect(sd, n, alpha, power),
    }
