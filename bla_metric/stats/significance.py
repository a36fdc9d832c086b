"""Is a difference between two runs real? Paired tests over the same datapoints.

- :func:`paired_bootstrap`: every metric of one view for runs A and B, their difference A - B, a
  95% percentile interval of the difference and a two-sided p-value, from resampling datapoints
  (the same resample for both runs, so the pairing is kept). Seeded: the same inputs and seed give
  the same interval and p-value.
- :func:`mcnemar_exact`: the exact McNemar test on a per-datapoint yes/no outcome (set accuracy):
  only the discordant datapoints count, and under "no difference" each of them is equally likely
  to favour A or B, so the two-sided p-value is a binomial tail with p = 1/2.
- :func:`sign_flip`: the paired sign-flip (permutation) test of a mean difference, exact by
  enumeration for up to :data:`EXACT_FLIPS` non-zero differences: valid at any n, where the
  bootstrap p-value is not (one datapoint gives a bootstrap p of 1 / (B + 1)).
- :func:`cochran_q`: Cochran's Q test that k conditions (templates) of the same datapoints have
  the same rate of a yes/no outcome (statsmodels' ``cochrans_q``, written with numpy so that the
  engine needs no statsmodels), its p-value from :func:`chi2_sf`.

The metrics themselves come from :mod:`bla_metric.formulas` (its per-datapoint statistics and their
aggregation, the ones its own bootstrap interval uses): no formula is written twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb, erfc, exp, lgamma, log, sqrt
from typing import Any

import numpy as np

from .. import formulas


def datapoint_stats(
    predictions: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    mode: str = "ranking",
    threshold: float | str | None = None,
) -> dict[str, np.ndarray]:
    """Per-datapoint statistics of one view ({name: array (n,)}), inputs checked as in
    :func:`bla_metric.formulas.compute`. Ranking view: ``set_accuracy`` and ``set_error`` (0/1
    per datapoint), ``correct`` and ``sentences`` (sentence accuracy = sum / sum). Binary view:
    ``tp``, ``fp``, ``tn``, ``fn``, ``all_same``."""
    formulas._check_mode(mode)
    blocks, _ = formulas._predictions(predictions, references, mode, threshold)
    return formulas._stats(mode, blocks, len(references))


def aggregate(mode: str, stats: dict[str, np.ndarray]) -> dict[str, float]:
    """The view's metrics from per-datapoint statistics (any subset of datapoints)."""
    return formulas._aggregate(mode, stats)


MAX_RESAMPLES = formulas.MAX_RESAMPLES
"""The most resamples of one paired bootstrap (:data:`bla_metric.formulas.MAX_RESAMPLES`)."""


def _check_resamples(resamples: Any) -> int:
    return formulas._check_bootstrap(resamples, low=1, name="resamples")


def paired_bootstrap(
    predictions_a: Sequence[Sequence[float]],
    predictions_b: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    mode: str = "ranking",
    threshold: float | str | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Paired bootstrap of A - B for every metric of ``mode``: {metric: {"a", "b", "difference",
    "ci": [low, high], "p_value"}}.

    Each resample draws n datapoints with replacement and recomputes both runs' metrics on the same
    draw. ``ci`` is the 2.5 / 97.5 percentile interval of the resampled differences. ``p_value``
    (two-sided) shifts the resampled differences to the null of no difference:
    ``(1 + #{|d* - d| >= |d|}) / (resamples + 1)`` where d is the observed difference; identical
    runs give difference 0 and p = 1. ``variation`` is False when every resample gave the same
    difference (:func:`varies`): the interval then has width 0 and the p-value means nothing
    (a constant difference of 8 datapoints gives p = 1 / (B + 1)); reports print
    "inconclusive (no variation)" instead of either.
    """
    resamples = _check_resamples(resamples)
    if len(predictions_a) != len(predictions_b):
        raise ValueError(
            f"run A has {len(predictions_a)} datapoints but run B has {len(predictions_b)}"
        )
    stats_a = datapoint_stats(predictions_a, references, mode, threshold)
    stats_b = datapoint_stats(predictions_b, references, mode, threshold)
    return paired_bootstrap_stats(stats_a, stats_b, mode, resamples, seed)


def paired_bootstrap_stats(
    stats_a: dict[str, np.ndarray],
    stats_b: dict[str, np.ndarray],
    mode: str,
    resamples: int = 2000,
    seed: int = 0,
    clusters: Sequence[Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`paired_bootstrap` from per-datapoint statistics of the same datapoints (those of
    :func:`datapoint_stats`, or :func:`bla_metric.paper.datapoint_stats` for generated answers);
    ``clusters``: one label per datapoint for a cluster bootstrap (:func:`formulas.resampled`)."""
    resamples = _check_resamples(resamples)
    observed_a, observed_b = aggregate(mode, stats_a), aggregate(mode, stats_b)
    draws_a, draws_b = formulas.resampled(mode, [stats_a, stats_b], resamples, seed, clusters)
    out = {}
    for key in observed_a:
        differences = draws_a[key] - draws_b[key]
        observed = observed_a[key] - observed_b[key]
        extreme = np.abs(differences - observed) >= abs(observed) - 1e-12
        low, high = np.percentile(differences, [2.5, 97.5])
        out[key] = {
            "a": observed_a[key],
            "b": observed_b[key],
            "difference": observed,
            "ci": [float(low), float(high)],
            "p_value": float((1 + extreme.sum()) / (resamples + 1)),
            "variation": varies(differences),
        }
    return out


def varies(draws: Any) -> bool:
    """Whether resampled values differ at all (beyond rounding): a bootstrap whose resamples
    are all equal (a constant per-datapoint difference, every datapoint tied, one datapoint)
    is no evidence, whatever its interval and p-value say."""
    values = np.asarray(draws, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return False
    return bool(finite.max() - finite.min() > 1e-12 * max(1.0, float(np.abs(finite).max())))


def mcnemar_exact(correct_a: Sequence[Any], correct_b: Sequence[Any]) -> dict[str, Any]:
    """Exact two-sided McNemar test of two paired 0/1 outcomes (one per datapoint).

    Returns the 2x2 counts (``both``, ``a_only``, ``b_only``, ``neither``) and ``p_value`` =
    min(1, 2 * P(X <= min(a_only, b_only))) for X ~ Binomial(a_only + b_only, 1/2), computed with
    exact integers; no discordant datapoint gives p = 1.
    """
    a = np.asarray(correct_a, dtype=float)
    b = np.asarray(correct_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"outcomes must be two flat lists of equal length, got {a.shape} and {b.shape}"
        )
    for name, values in (("A", a), ("B", b)):
        if not np.isin(values, (0, 1)).all():
            raise ValueError(f"outcomes of run {name} must be 0 or 1")
    a, b = a.astype(bool), b.astype(bool)
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    discordant = a_only + b_only
    if discordant == 0:
        p = Fraction(1)
    else:
        tail = sum(comb(discordant, i) for i in range(min(a_only, b_only) + 1))
        p = min(Fraction(1), 2 * Fraction(tail, 2**discordant))
    return {
        "both": int((a & b).sum()),
        "a_only": a_only,
        "b_only": b_only,
        "neither": int((~a & ~b).sum()),
        "p_value": float(p),
    }


def cochran_q(outcomes: Any) -> dict[str, float]:
    """Cochran's Q of ``outcomes`` (n datapoints x k conditions, 0/1): {"statistic", "df",
    "p_value"}, Q = (k - 1) (k sum_j C_j^2 - N^2) / (k N - sum_i R_i^2) with C_j the column and
    R_i the row sums, N the total, p from chi-square with k - 1 degrees of freedom. NaN where
    undefined (fewer than two conditions, or no datapoint with mixed outcomes)."""
    x = np.asarray(outcomes, dtype=float)
    if x.ndim != 2 or not np.isin(x, (0, 1)).all():
        raise ValueError(f"Cochran's Q needs a 0/1 matrix (datapoints x conditions), got {x.shape}")
    k = x.shape[1]
    rows, total = x.sum(axis=1), x.sum()
    denominator = k * total - (rows**2).sum()
    if k < 2 or denominator <= 0:
        return {"statistic": float("nan"), "df": k - 1, "p_value": float("nan")}
    q = (k - 1) * (k * (x.sum(axis=0) ** 2).sum() - total**2) / denominator
    return {"statistic": float(q), "df": k - 1, "p_value": chi2_sf(float(q), k - 1)}


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with a whole number ``df`` >= 1 of degrees of freedom (the
    closed forms of the regularised upper incomplete gamma function at half-integers)."""
    if df < 1 or int(df) != df:
        raise ValueError(f"degrees of freedom must be a whole number >= 1, got {df}")
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2 == 0:
        terms = range(df // 2)  # exp(-x/2) sum_{i < df/2} (x/2)^i / i!
        return float(min(1.0, sum(exp(-half + i * log(half) - lgamma(i + 1)) for i in terms)))
    tail = erfc(sqrt(half))  # odd df: erfc(sqrt(x/2)) + exp(-x/2) sum (x/2)^(i-1/2) / G(i+1/2)
    tail += sum(
        exp(-half + (i - 0.5) * log(half) - lgamma(i + 0.5)) for i in range(1, (df - 1) // 2 + 1)
    )
    return float(min(1.0, tail))


EXACT_FLIPS = 16
"""Up to this many non-zero paired differences :func:`sign_flip` enumerates every sign pattern."""


def sign_flip(differences: Sequence[float], draws: int = 20_000, seed: int = 0) -> dict[str, Any]:
    """Two-sided sign-flip test that paired ``differences`` (one per datapoint) have mean 0:
    {"n", "p_value", "exact"}. Under the null each difference is as likely with either sign; p
    is the share of sign patterns whose |sum| reaches the observed one: all 2^m patterns of the m
    non-zero differences when m <= :data:`EXACT_FLIPS`, else ``draws`` random ones
    ((1 + hits) / (draws + 1)). No non-zero difference gives p = 1."""
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or not np.isfinite(d).all():
        raise ValueError("sign_flip needs one finite difference per datapoint")
    nonzero = d[d != 0]
    observed = abs(nonzero.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(nonzero).sum()))
    m = len(nonzero)
    if m == 0:
        return {"n": len(d), "p_value": 1.0, "exact": True}
    if m <= EXACT_FLIPS:
        patterns = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
        sums = np.abs(patterns @ nonzero)
        return {"n": len(d), "p_value": float(np.mean(sums >= observed - tolerance)), "exact": True}
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, draws, 2000):
        signs = rng.choice((-1.0, 1.0), (min(2000, draws - start), m))
        hits += int((np.abs(signs @ nonzero) >= observed - tolerance).sum())
    return {"n": len(d), "p_value": float((1 + hits) / (draws + 1)), "exact": False}
