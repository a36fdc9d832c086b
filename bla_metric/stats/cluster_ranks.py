"""Rank sets for clustered datapoints: the step-down of :mod:`bla_metric.stats.ranks` with critical
values from sign flips of whole clusters.

A benchmark whose datapoints come in clusters (BLA's active-passive task: 613 datapoints in 43
predicates of very unequal sizes, the largest 247) is not independent evidence per datapoint:
a model's success can depend on the predicate. Permuting the models' labels within each
datapoint then makes sets that are too narrow, and so does MRSW's bootstrap of whole clusters
(``python -m bla_eval.simulations.coverage --tables clusters``). Two methods here:

- :func:`cluster_sign_flip_statistics` (the leaderboard's): each draw flips the sign of every
  cluster's sums of the paired differences at random, the statistic the mean difference over
  its cluster-robust standard error with the null imposed; valid whether or not the models are
  exchangeable within a cluster (some models may depend on the predicate, others not);
- :func:`cluster_permutation_statistics`: each draw gives every cluster one random order of
  the models, the statistic the cluster-robust t (statsmodels' ``cov_type="cluster"``); exact
  when the models are exchangeable within a cluster, too narrow when they are not;
- :func:`minimum_clusters` and :func:`effective_clusters`: fewer clusters than the first, or
  clusters more unequal than the simulation covers (an effective number below
  :data:`MINIMUM_EFFECTIVE`), are refused in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import significance

ALPHA = 0.05
MINIMUM_EFFECTIVE = 5.0
"""The least effective number of clusters (:func:`effective_clusters`) the rank sets by cluster
accept: AP's 43 predicates have 5.04, the most unequal design the simulation covers."""
PERMUTATION_CELLS = 4_000_000
"""Permuted cluster sums made at once (resamples x clusters x models)."""


def minimum_clusters(alpha: float = ALPHA) -> int:
    """The fewest clusters with which :func:`cluster_permutation_statistics` can tell two models
    apart at level ``alpha``: G clusters give two models 2^G label patterns, two of which reach
    the largest |t|, so a rejection needs 2 / 2^G <= ``alpha`` (6 clusters at 0.05)."""
    return int(np.ceil(1 + np.log2(1 / alpha) - 1e-12))


def effective_clusters(sizes: Sequence[float]) -> float:
    """(sum n_c)^2 / sum n_c^2: the number of equal clusters whose sizes weigh as these do (G
    for equal sizes, near 1 when one cluster holds nearly everything)."""
    n = np.asarray(sizes, float)
    return float(n.sum() ** 2 / (n**2).sum())


def check_balance(index: np.ndarray) -> None:
    """ValueError in one line where the clusters of ``index`` are more unequal than
    :data:`MINIMUM_EFFECTIVE` allows."""
    sizes = np.bincount(index)
    found = effective_clusters(sizes[sizes > 0])
    if found < MINIMUM_EFFECTIVE:
        raise ValueError(
            f"rank sets by cluster: {len(sizes)} clusters of sizes up to {sizes.max()} weigh as "
            f"{found:.2f} equal ones, fewer than the {MINIMUM_EFFECTIVE:g} the simulation "
            "shows the sets hold at (AP's predicates: 5.04): no method here holds there"
        )


def cluster_index(clusters: Sequence[Any], n: int) -> np.ndarray:
    """Each datapoint's cluster as 0 .. G - 1 (labels compared as text); ValueError when there
    are not ``n`` labels or fewer than :func:`minimum_clusters` clusters."""
    labels = np.asarray([str(c) for c in clusters])
    if len(labels) != n:
        raise ValueError(f"{len(labels)} cluster labels for {n} datapoints")
    _, index = np.unique(labels, return_inverse=True)
    groups = int(index.max()) + 1 if n else 0
    if groups < minimum_clusters():
        raise ValueError(
            f"rank sets by cluster need at least {minimum_clusters()} clusters (with fewer, two "
            f"runs can never be told apart at {ALPHA:g}), got {groups}"
        )
    return index


def cluster_permutation_statistics(
    values: np.ndarray, clusters: Sequence[Any], resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(observed cluster-robust t-statistics (models, models), their permutation null
    distribution (models, models, resamples + 1), the observed one first) for ``values``
    (models, datapoints) whose datapoints fall into ``clusters`` (one label per datapoint).

    [j, k] is mean(d) / se, d the per-datapoint differences of models j and k and se the
    cluster-robust standard error ``sqrt(G / (G - 1) * sum_c (D_c - n_c mean(d))^2) / n`` (D_c
    the sum of d over cluster c, n_c its size, G clusters, n datapoints). Each draw permutes the
    models' labels within each cluster, the same permutation for every datapoint of the
    cluster. Exact when the models are exchangeable within a cluster; studentised, so it holds
    for equal means otherwise as G grows."""
    x = np.asarray(values, float)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"permutation rank sets need (models >= 2, datapoints), got {x.shape}")
    index = cluster_index(clusters, x.shape[1])
    resamples = significance._check_resamples(resamples)
    groups, count = int(index.max()) + 1, x.shape[0]
    sums = np.zeros((groups, count))
    np.add.at(sums, index, x.T)
    sizes = np.bincount(index, minlength=groups).astype(float)
    rng = np.random.default_rng(seed)
    null = np.empty((count, count, resamples + 1))
    null[:, :, 0] = _cluster_t(sums[None], sizes)[0]
    block = max(1, PERMUTATION_CELLS // (groups * count))
    rows = np.arange(groups)[None, :, None]
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        order = rng.permuted(
            np.broadcast_to(np.arange(count), (stop - start, groups, count)), axis=2
        )
        null[:, :, 1 + start : 1 + stop] = np.moveaxis(_cluster_t(sums[rows, order], sizes), 0, 2)
    return null[:, :, 0].copy(), null


def _cluster_t(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Cluster-robust t-statistics (draws, models, models) from the models' sums per cluster
    ``sums`` (draws, clusters, models) and the clusters' ``sizes``; +-inf for a difference
    without variation that is not 0, 0 for none."""
    n = sizes.sum()
    groups = len(sizes)
    means = sums.sum(axis=1) / n  # (draws, models)
    residual = sums - sizes[None, :, None] * means[:, None, :]
    second = np.matmul(np.swapaxes(residual, 1, 2), residual)  # (draws, models, models)
    squares = np.diagonal(second, axis1=1, axis2=2)
    variance = (squares[:, :, None] + squares[:, None, :] - 2 * second) * groups / (groups - 1)
    diff = means[:, :, None] - means[:, None, :]
    scale = np.maximum(1.0, np.abs(sums).max()) ** 2
    varies = variance > 1e-12 * scale
    se = np.sqrt(np.where(varies, variance, 1.0)) / n
    flat = np.where(np.abs(diff) > 1e-12, np.copysign(np.inf, diff), 0.0)
    return np.where(varies, diff / se, flat)


def cluster_sign_flip_statistics(
    values: np.ndarray, clusters: Sequence[Any], resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(observed statistics (models, models), their null distribution (models, models,
    resamples + 1), the observed one first) by a wild bootstrap of whole clusters with the null
    imposed: [j, k] is sum_c D_c / sqrt(G / (G - 1) * sum_c D_c^2), D_c the sum over cluster c
    of the per-datapoint differences of models j and k (the mean difference over its
    cluster-robust standard error with the residuals taken about 0, the mean H0 says), and each
    draw flips the sign of every cluster's D_c at random (Rademacher weights, one per cluster
    for all pairs: Cameron, Gelbach & Miller 2008; a sign-flip test of the cluster sums).

    Under "no two models differ" every D_c has mean 0 however the models depend on the
    clusters, so no exchangeability of the models is needed (exact where the D_c are
    symmetric); ``python -m bla_eval.simulations.coverage --tables clusters`` measures it on AP's
    predicate sizes. A pair whose D_c are all 0 has statistic 0. Clusters more unequal than
    :data:`MINIMUM_EFFECTIVE` allows are refused (:func:`check_balance`)."""
    x = np.asarray(values, float)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"cluster rank sets need (models >= 2, datapoints), got {x.shape}")
    index = cluster_index(clusters, x.shape[1])
    check_balance(index)
    resamples = significance._check_resamples(resamples)
    groups, count = int(index.max()) + 1, x.shape[0]
    sums = np.zeros((groups, count))
    np.add.at(sums, index, x.T)
    pairs = sums[:, :, None] - sums[:, None, :]  # (clusters, models, models)
    square = (pairs**2).sum(axis=0) * groups / (groups - 1)
    varies = square > 1e-24 * max(1.0, float(np.abs(sums).max())) ** 2
    scale = np.where(varies, np.sqrt(np.where(varies, square, 1.0)), np.inf)
    rng = np.random.default_rng(seed)
    null = np.empty((count, count, resamples + 1))
    null[:, :, 0] = pairs.sum(axis=0) / scale
    block = max(1, PERMUTATION_CELLS // (groups * count))
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        flipped = rng.choice((-1.0, 1.0), size=(stop - start, groups)) @ sums  # (draws, models)
        drawn = (flipped[:, :, None] - flipped[:, None, :]) / scale[None]
        null[:, :, 1 + start : 1 + stop] = np.moveaxis(drawn, 0, 2)
    return null[:, :, 0].copy(), null
