"""A leaderboard with statistics: confidence sets for ranks, groups of models not separated,
the smallest difference the data can detect.

- :func:`rank_sets`: confidence sets for ranks by the step-down method of Mogstad, Romano, Shaikh
  and Wilhelm ("Inference for ranks with applications to mobility across neighbourhoods and
  academic achievement across countries", Review of Economic Studies 91(1), 2024, Sections 3.2-3.3;
  R package ``csranks``). Every ordered pair (j, k) is a hypothesis "model j is not better than
  model k"; the critical value is the 1 - alpha quantile, over bootstrap resamples of the
  datapoints drawn jointly for all models, of the largest centred, studentised difference
  ``(d*_jk - d_jk) / se_jk`` over the hypotheses not yet rejected; a hypothesis is rejected when
  ``d_jk / se_jk`` exceeds it, and the step is repeated until nothing more is rejected. A model's
  set is ``[1 + #models shown better, models - #models shown worse]``. ``simultaneous`` (the
  default) tests all pairs at once: all sets hold together with probability 1 - alpha.
  ``marginal`` tests, for each model, only the pairs it is part of: each set holds on its own.
- :func:`best_set`: the models whose simultaneous set reaches rank 1, a 1 - alpha confidence set
  for the best model.
- :func:`rank_intervals`: the rank sets with each model's value and percentile interval.
- :func:`holm`: Holm's step-down correction of a family of p-values.
- :func:`tied_groups`: models in score order, grouped where no pair of a group differs
  significantly after the correction (a compact letter display: a model may be in two groups).
- :func:`minimum_detectable_effect`: the smallest true difference a paired two-sided test at
  level ``alpha`` detects with probability ``power`` on n datapoints:
  ``(z_{1-alpha/2} + z_{power}) * sd(d) / sqrt(n)``, d the per-datapoint paired difference; NaN
  where it is undefined (fewer than two datapoints, no variation).

The metrics come from :mod:`bla_metric.formulas` (per-datapoint statistics and their
aggregation, resampled with :func:`bla_metric.formulas.resampled`), the paired test from
:mod:`bla_metric.stats.significance`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from math import sqrt
from statistics import NormalDist
from typing import Any

import numpy as np

from .. import formulas
from . import cluster_ranks, significance

ALPHA = 0.05
POWER = 0.8


PROPORTIONS = formulas.SHARES["ranking"]
"""Ranking-view metrics that are a share of datapoints (0/1 each): their interval is
:func:`bla_metric.formulas.share_interval`'s (Clopper-Pearson), the one ``results.json`` gives."""
RANK_SETS = ("simultaneous", "marginal")
"""The kinds of confidence sets for ranks :func:`rank_sets` computes (the first is the default)."""


def rank_sets(
    observed: np.ndarray,
    draws: np.ndarray,
    alpha: float = ALPHA,
    kind: str = RANK_SETS[0],
) -> np.ndarray:
    """Confidence sets for ranks from bootstrap draws (MRSW's method), (models, 2) whole numbers
    [low, high] (rank 1 = best).

    ``observed``: (models,) the metric on all datapoints (higher is better); ``draws``: (models,
    resamples) the metric on bootstrap resamples drawn jointly for all models. ``kind``:
    ``simultaneous`` (all sets hold together) or ``marginal`` (each on its own). A pair whose
    difference does not vary over the resamples is never told apart. Below a few hundred
    datapoints these sets under-cover (``python -m bla_eval.simulations.coverage``): where
    per-datapoint values exist, :func:`permutation_rank_sets` holds."""
    t_obs, null = _bootstrap_statistics(np.asarray(observed, float), np.asarray(draws, float))
    return _sets(t_obs, null, alpha, kind)


def permutation_rank_sets(
    values: np.ndarray,
    resamples: int = 2000,
    seed: int = 0,
    alpha: float = ALPHA,
    kind: str = RANK_SETS[0],
) -> np.ndarray:
    """Confidence sets for ranks from ``values`` (models, datapoints), each model's metric the
    mean of its row (higher is better): the step-down of :func:`rank_sets` with the paired
    t-statistic of every ordered pair, ``mean(d) / (sd(d) / sqrt(n))`` with d the per-datapoint
    differences, and its null distribution from ``resamples`` random permutations of the models
    within each datapoint (for two models, the sign-flip test; the observed assignment counts
    as one of the draws). Exact at any n when the models' values are exchangeable within a
    datapoint (equal models); studentised, so it holds for equal means otherwise as n grows.
    (models, 2) whole numbers [low, high]."""
    t_obs, null = permutation_statistics(values, resamples, seed)
    return _sets(t_obs, null, alpha, kind)


PERMUTATION_CELLS = 4_000_000
"""Permuted values made at once (resamples x datapoints x models): the working memory of
:func:`permutation_statistics`."""


def permutation_statistics(
    values: np.ndarray, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(observed paired t-statistics (models, models), their permutation null distribution
    (models, models, resamples + 1), the observed one first) of :func:`permutation_rank_sets`.
    A pair whose differences are all equal has t = 0 when they are 0, else +-inf."""
    x = np.asarray(values, float)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"permutation rank sets need (models >= 2, datapoints), got {x.shape}")
    resamples = significance._check_resamples(resamples)
    count, n = x.shape
    rng = np.random.default_rng(seed)
    null = np.empty((count, count, resamples + 1))
    null[:, :, 0] = _paired_t(x.T[None])[0]
    block = max(1, PERMUTATION_CELLS // max(n * count, 1))
    rows = np.arange(n)[None, :, None]
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        order = rng.permuted(np.broadcast_to(np.arange(count), (stop - start, n, count)), axis=2)
        permuted = x.T[rows, order]  # (draws, datapoints, models): labels shuffled per datapoint
        null[:, :, 1 + start : 1 + stop] = np.moveaxis(_paired_t(permuted), 0, 2)
    return null[:, :, 0].copy(), null


def _paired_t(x: np.ndarray) -> np.ndarray:
    """Paired t-statistics (draws, models, models) of ``x`` (draws, datapoints, models): [j, k]
    = mean(x_j - x_k) / (sd(x_j - x_k) / sqrt(n)), sd with n - 1; +-inf for differences that
    are all equal and not 0, 0 for none."""
    n = x.shape[1]
    means = x.mean(axis=1)  # (draws, models)
    second = np.matmul(np.swapaxes(x, 1, 2), x) / n  # (draws, models, models)
    diff = means[:, :, None] - means[:, None, :]
    squares = np.diagonal(second, axis1=1, axis2=2)
    variance = squares[:, :, None] + squares[:, None, :] - 2 * second - diff**2
    scale = np.maximum(1.0, np.abs(x).max()) ** 2
    varies = variance > 1e-12 * scale
    se = np.sqrt(np.where(varies, variance, 1.0) / max(n - 1, 1))
    flat = np.where(np.abs(diff) > 1e-12 * np.sqrt(scale), np.copysign(np.inf, diff), 0.0)
    return np.where(varies & (n > 1), diff / se, flat)


def _bootstrap_statistics(observed: np.ndarray, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(observed studentised differences (models, models), the centred, studentised bootstrap
    differences (models, models, resamples)) of :func:`rank_sets`; 0 for a pair whose
    difference does not vary over the resamples."""
    diff = observed[:, None] - observed[None, :]
    boot = draws[:, None, :] - draws[None, :, :]  # (models, models, resamples)
    se = boot.std(axis=2)
    varies = se > 1e-12 * np.maximum(1.0, np.abs(boot).max(axis=2))
    safe = np.where(varies, se, 1.0)
    t_obs = np.where(varies, diff / safe, 0.0)
    centred = np.where(varies[:, :, None], (boot - diff[:, :, None]) / safe[:, :, None], 0.0)
    return t_obs, centred


def _family(count: int, model: int | None) -> np.ndarray:
    """The ordered pairs a step-down tests: all of them (``model`` None), or those of one
    model (its marginal set)."""
    off = ~np.eye(count, dtype=bool)
    if model is None:
        return off
    own = np.zeros((count, count), dtype=bool)
    own[model, :] = own[:, model] = True
    return own & off


def _sets(t_obs: np.ndarray, null: np.ndarray, alpha: float, kind: str) -> np.ndarray:
    """Rank sets (models, 2) of ``kind`` from the statistics and their null draws: the
    simultaneous ones from one step-down over every pair; each marginal one from the step-down
    over its own model's pairs alone (MRSW: no other model's rejections count)."""
    if kind not in RANK_SETS:
        raise ValueError(f"rank sets {kind!r}: expected one of {', '.join(RANK_SETS)}")
    count = len(t_obs)
    if kind == RANK_SETS[0]:
        return sets_of(_step_down(t_obs, null, _family(count, None), alpha))
    sets = np.empty((count, 2), dtype=int)
    for model in range(count):
        rejected = _step_down(t_obs, null, _family(count, model), alpha)
        sets[model] = [1 + rejected[:, model].sum(), count - rejected[model, :].sum()]
    return sets


def sets_of(better: np.ndarray) -> np.ndarray:
    """Rank sets (models, 2) from :func:`shown_better`'s matrix: [1 + #models shown better,
    models - #models shown worse]."""
    low = 1 + better.sum(axis=0)
    high = len(better) - better.sum(axis=1)
    return np.stack([low, high], axis=1)


def shown_better(observed: np.ndarray, draws: np.ndarray, alpha: float) -> np.ndarray:
    """(models, models) booleans: [j, k] when the simultaneous bootstrap step-down rejects "j
    is not better than k" (arguments as :func:`rank_sets`)."""
    t_obs, null = _bootstrap_statistics(np.asarray(observed, float), np.asarray(draws, float))
    return _step_down(t_obs, null, _family(len(t_obs), None), alpha)


def _step_down(
    t_obs: np.ndarray, centred: np.ndarray, family: np.ndarray, alpha: float
) -> np.ndarray:
    """The hypotheses of ``family`` the step-down rejects (see :func:`rank_sets`)."""
    rejected = np.zeros_like(family)
    while True:
        active = family & ~rejected
        if not active.any():
            return rejected
        largest = np.where(active[:, :, None], centred, -np.inf).max(axis=(0, 1))
        critical = np.quantile(largest, 1 - alpha, method="inverted_cdf")
        new = active & (t_obs > critical)
        if not new.any():
            return rejected
        rejected |= new


def best_set(sets: np.ndarray) -> list[int]:
    """The models (indices) whose simultaneous rank set of :func:`rank_sets` reaches rank 1: a
    confidence set for the best model."""
    return [m for m, (low, _) in enumerate(np.asarray(sets)) if low == 1]


RANK_METHODS = ("permutation", "bootstrap", "cluster sign flip")
"""How the rank sets' step-down finds its critical values: random permutations of the models
within each datapoint (:func:`permutation_rank_sets`, the default: it holds at n = 30),
bootstrap resamples (:func:`rank_sets`, MRSW's; for metrics without a per-datapoint value), or
random sign flips of whole clusters of datapoints (clustered datapoints:
:func:`bla_metric.stats.cluster_ranks.cluster_sign_flip_statistics`)."""


def rank_method(mode: str, metric: str, clusters: Sequence[Any] | None) -> str:
    """The method of :data:`RANK_METHODS` :func:`rank_intervals` uses where the metric is a
    mean of per-datapoint values (every metric of the :data:`bla_metric.formulas.MEAN` mode):
    the permutation within datapoints, or within clusters when ``clusters`` are given; else the
    bootstrap."""
    if not _has_values(mode, metric):
        return RANK_METHODS[1]
    return RANK_METHODS[0] if clusters is None else RANK_METHODS[2]


def _has_values(mode: str, metric: str) -> bool:
    return mode == formulas.MEAN or (mode, metric) in {
        ("ranking", "sentence_accuracy"),
        ("ranking", "set_accuracy"),
        ("ranking", "set_error"),
        ("binary", "accuracy"),
        ("binary", "all_same_rate"),
    }


def datapoint_values(mode: str, metric: str, stats: dict[str, np.ndarray]) -> np.ndarray:
    """Per-datapoint values whose mean is exactly ``metric`` (a ratio of sums, sentence accuracy
    or binary accuracy, is divided by the mean denominator: datapoints with more sentences
    weigh more, as in the metric)."""
    if mode == "ranking" and metric == "sentence_accuracy":
        sentences = np.asarray(stats["sentences"], float)
        return np.asarray(stats["correct"], float) / sentences.mean()
    if mode == "binary" and metric == "accuracy":
        tp, tn = (np.asarray(stats[k], float) for k in ("tp", "tn"))
        total = sum(np.asarray(stats[k], float) for k in ("tp", "fp", "tn", "fn"))
        return (tp + tn) / total.mean()
    return np.asarray(stats[metric], float)


def rank_intervals(
    stats: Sequence[dict[str, np.ndarray]],
    mode: str,
    metric: str,
    resamples: int = 2000,
    seed: int = 0,
    higher_is_better: bool = True,
    kind: str = RANK_SETS[0],
    alpha: float = ALPHA,
    clusters: Sequence[Any] | None = None,
    share: bool | None = None,
) -> list[dict[str, Any]]:
    """Per model (in the order of ``stats``, per-datapoint statistics of the same datapoints):
    ``rank`` (on all datapoints), ``interval`` [low, high] (the 1 - alpha confidence set of
    ``kind``, which ``rank_set`` names, by the method ``rank_method`` names:
    :func:`permutation_rank_sets`, its step-down on
    :func:`bla_metric.stats.cluster_ranks.cluster_sign_flip_statistics` for clustered datapoints,
    or :func:`rank_sets` for metrics without per-datapoint values), ``best`` (in the
    confidence set for the best model) and
    ``shown_better_than`` (the models it beats), both from the simultaneous step-down, and
    ``ci`` [low, high] of the metric itself (95%: :func:`bla_metric.formulas.share_interval`
    for the 0/1 metrics of :data:`PROPORTIONS`, as in ``results.json``, else the percentile
    interval of bootstrap draws). ``clusters``: one label per datapoint: rank sets from
    sign flips of whole clusters (fewer than
    :func:`bla_metric.stats.cluster_ranks.minimum_clusters` clusters, or clusters too unequal:
    ValueError), and the metric's
    interval the percentile one of a cluster bootstrap for every metric. ``share``:
    whether the metric is a share of datapoints; None: those of :data:`PROPORTIONS`, and in the
    :data:`bla_metric.formulas.MEAN` mode a metric whose values are all 0 or 1
    (:func:`bla_metric.formulas.is_share`)."""
    if len(stats) < 2:
        raise ValueError("rank intervals need at least two models")
    resamples = significance._check_resamples(resamples)
    sign = 1.0 if higher_is_better else -1.0
    observed = sign * np.array([formulas._aggregate(mode, s)[metric] for s in stats])
    found = formulas.resampled(mode, stats, resamples, seed, clusters)
    draws = sign * np.stack([d[metric] for d in found])
    method = rank_method(mode, metric, clusters)
    if method == RANK_METHODS[1]:
        t_obs, null = _bootstrap_statistics(observed, draws)
    else:
        values = sign * np.stack([datapoint_values(mode, metric, s) for s in stats])
        t_obs, null = (
            permutation_statistics(values, resamples, seed)
            if clusters is None
            else cluster_ranks.cluster_sign_flip_statistics(values, clusters, resamples, seed)
        )
    joint = _step_down(t_obs, null, _family(len(stats), None), alpha)
    sets = sets_of(joint) if kind == RANK_SETS[0] else _sets(t_obs, null, alpha, kind)
    best = set(best_set(sets_of(joint)))
    point = _ranks(observed[:, None])[:, 0]
    out = []
    for m in range(len(stats)):
        if clusters is None and _is_share(mode, metric, stats[m], share):
            outcomes = np.asarray(stats[m][metric], float)
            ci_low, ci_high = formulas.share_interval(int(outcomes.sum()), len(outcomes))
        else:
            ci_low, ci_high = np.percentile(sign * draws[m], [2.5, 97.5])
        out.append(
            {
                "value": float(sign * observed[m]),
                "ci": [float(ci_low), float(ci_high)],
                "rank": int(point[m]),
                "interval": [int(sets[m, 0]), int(sets[m, 1])],
                "rank_set": kind,
                "rank_method": method,
                "best": m in best,
                "shown_better_than": [int(k) for k in np.flatnonzero(joint[m])],
            }
        )
    return out


def _is_share(mode: str, metric: str, stats: dict[str, np.ndarray], share: bool | None) -> bool:
    """Whether :func:`rank_intervals` gives ``metric`` the share interval (see there)."""
    if share is not None:
        return share
    if mode == formulas.MEAN:
        return formulas.is_share(stats[metric])
    return mode == "ranking" and metric in PROPORTIONS


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
    clusters: Sequence[Any] | None = None,
) -> dict[tuple[int, int], dict[str, float]]:
    """{(i, j): {"difference", "p_value", "p_holm"}} for every pair of models i < j: the paired
    bootstrap test of :func:`bla_metric.stats.significance.paired_bootstrap_stats` on
    ``metric``, and its Holm-corrected p-value over all pairs (``clusters``: a cluster
    bootstrap)."""
    pairs = list(combinations(range(len(stats)), 2))
    tests = {}
    for i, j in pairs:
        result = significance.paired_bootstrap_stats(
            stats[i], stats[j], mode, resamples, seed, clusters
        )
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
    """Groups of models not separated (no significant difference, which is no evidence of
    equivalence): in score order (best first), every maximal run of
    consecutive models of which no pair differs at ``alpha`` (Holm-corrected p-values of
    ``tests``). Groups are listed best first; a model lies in one group or in several
    overlapping ones."""

    def tied(a: int, b: int) -> bool:
        return tests[(min(a, b), max(a, b))]["p_holm"] >= alpha

    return _groups(values, tied, higher_is_better)


def rank_set_groups(
    values: Sequence[float], better: Sequence[Sequence[int]], higher_is_better: bool = True
) -> list[list[int]]:
    """The groups of :func:`tied_groups` with two models in one group when the simultaneous
    step-down (``better[m]``: the models m is shown better than, :func:`rank_intervals`'
    ``shown_better_than``) separates neither from the other: consistent with the rank sets."""
    beats = [set(b) for b in better]
    return _groups(values, lambda a, b: b not in beats[a] and a not in beats[b], higher_is_better)


def _groups(
    values: Sequence[float], tied: Callable[[int, int], bool], higher_is_better: bool
) -> list[list[int]]:
    """Maximal runs of consecutive models in score order (best first) of which ``tied`` holds
    for every pair (not separated)."""
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(range(len(values)), key=lambda m: (-sign * values[m], m))
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
    approximation), with ``sd`` the standard deviation of the per-datapoint differences. NaN
    when undefined: fewer than two datapoints, or no variation (sd 0 or NaN)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if n < 2 or not sd > 0:
        return float("nan")
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
) -> dict[str, Any]:
    """The minimum detectable effect on these models' datapoints: ``sd`` is the root mean square
    over all pairs of models of the standard deviation of their per-datapoint differences
    (:func:`per_datapoint`); with ``n``, ``alpha``, ``power`` and the effect ``mde``. And
    ``adjacent``: per pair of models next to each other in score order (best first; indices
    ``a``, ``b``), the pair's own ``sd`` and ``mde`` at ``alpha_corrected`` (``alpha`` divided
    by the number of pairs: the first step of Holm's correction over all pairs)."""
    values = [per_datapoint(mode, metric, s) for s in stats]
    n = len(values[0])
    pairs = list(combinations(range(len(values)), 2))
    variances = [_variance(values[a] - values[b]) for a, b in pairs]
    sd = float(sqrt(np.mean(variances))) if variances else float("nan")
    corrected = alpha / max(len(pairs), 1)
    means = [float(v.mean()) if n else float("nan") for v in values]
    order = sorted(range(len(values)), key=lambda m: (-means[m], m))
    adjacent = []
    for a, b in zip(order, order[1:], strict=False):
        pair_sd = float(sqrt(_variance(values[a] - values[b])))
        adjacent.append(
            {
                "a": a,
                "b": b,
                "sd": pair_sd,
                "mde": minimum_detectable_effect(pair_sd, n, corrected, power),
            }
        )
    return {
        "n": n,
        "sd": sd,
        "alpha": alpha,
        "power": power,
        "mde": minimum_detectable_effect(sd, n, alpha, power),
        "alpha_corrected": corrected,
        "adjacent": adjacent,
    }


def _variance(values: np.ndarray) -> float:
    """The sample variance (ddof 1); NaN below two values."""
    return float(np.var(values, ddof=1)) if len(values) > 1 else float("nan")
