"""Calibration of probabilities P(yes): is a sentence given p = 0.7 true 70% of the time?

:func:`reliability` sorts the sentences' probabilities into ``bins`` equal-width bins of [0, 1]
(the last one closed: p = 1 falls into it) and gives per bin its count, mean probability
(confidence) and share of true sentences (accuracy). :func:`expected_calibration_error` is

    ECE = sum over bins b of (n_b / N) * |accuracy_b - confidence_b|

(Naeini et al., 2015; Guo et al., 2017): 0 for perfectly calibrated probabilities, at most 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_BINS = 10
MAX_BINS = 1000


def _flat(probabilities: Sequence[Any], labels: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray([v for row in probabilities for v in row], dtype=float)
    y = np.asarray([v for row in labels for v in row], dtype=float)
    if p.shape != y.shape:
        raise ValueError(f"{p.size} probabilities but {y.size} labels")
    if p.size == 0:
        raise ValueError("no probabilities to calibrate")
    if not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("probabilities must lie in [0, 1]")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    return p, y


def reliability(
    probabilities: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    bins: int = DEFAULT_BINS,
) -> list[dict[str, float]]:
    """Per bin (equal width, [k/bins, (k+1)/bins), the last closed): ``low``, ``high``, ``n``,
    ``confidence`` (mean probability) and ``accuracy`` (share of label 1); empty bins have n = 0
    and NaN means. Inputs: one list per datapoint, as the metric takes them."""
    if not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be a whole number from 1 to {MAX_BINS}, got {bins!r}")
    p, y = _flat(probabilities, labels)
    index = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for k in range(bins):
        inside = index == k
        count = int(inside.sum())
        out.append(
            {
                "low": k / bins,
                "high": (k + 1) / bins,
                "n": count,
                "confidence": float(p[inside].mean()) if count else float("nan"),
                "accuracy": float(y[inside].mean()) if count else float("nan"),
            }
        )
    return out


def expected_calibration_error(
    probabilities: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    bins: int = DEFAULT_BINS,
) -> float:
    """ECE = sum_b (n_b / N) |accuracy_b - confidence_b| over :func:`reliability`'s bins."""
    table = reliability(probabilities, labels, bins)
    total = sum(row["n"] for row in table)
    return float(
        sum(
            row["n"] / total * abs(row["accuracy"] - row["confidence"]) for row in table if row["n"]
        )
    )


def brier_score(probabilities: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> float:
    """Mean squared difference between P(yes) and the label over all sentences (0 = perfect; 0.25
    for P(yes) = 0.5 everywhere)."""
    p, y = _flat(probabilities, labels)
    return float(np.mean((p - y) ** 2))


def calibration_summary(
    probabilities: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    bins: int = DEFAULT_BINS,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """``ece``; ``p_value``, the test of calibration (H0: each sentence is true with its own
    P(yes), datapoints independent, the sentences of one datapoint however they depend on each
    other: BLA's two true and two false per image); ``floor`` and the Brier score ``brier``.

    ECE is sum_b |R_b| / N with R_b the sum over the bin's sentences of label - P(yes), and R_b
    is a sum over datapoints of each datapoint's own part D_db. Under H0 every datapoint's
    vector D_d has mean 0 whatever its sentences' joint law, so the test flips the sign of
    whole datapoints (a wild bootstrap of datapoints with Rademacher weights, Cameron, Gelbach
    & Miller 2008): ``resamples`` draws of sum_b |sum_d e_d D_db| / N give ECE's null
    distribution, and p = (1 + #{null ECE >= ECE}) / (resamples + 1) (``python -m
    bla_eval.simulations.coverage --tables calibration`` measures its size on BLA's design and
    on independent labels, and its power). Redrawing each sentence's label on its own
    (Broecker & Smith 2007) ignores that a datapoint's labels are fixed two and two, and says
    "miscalibrated" to a calibrated model in nearly half of BLA's runs. ``floor``: the mean of
    the null ECEs, what noise alone gives on these datapoints (under H0 its mean is a
    calibrated model's mean ECE; a miscalibrated model's residuals raise it too). No interval
    of ECE is given: the bootstrap's, even shifted by its bias, covered a calibrated model's
    true ECE (0) in under 3% of simulated runs, and no interval was found that holds."""
    p, y = _flat(probabilities, labels)
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be a whole number of at least 1, got {resamples!r}")
    parts = datapoint_residuals(probabilities, p, y, bins)
    ece = float(np.abs(parts.sum(axis=0)).sum() / p.size)
    draws = sign_flip_eces(parts, p.size, resamples, seed)
    tolerance = 1e-12 * max(1.0, ece)
    return {
        "ece": ece,
        "p_value": float((1 + np.sum(draws >= ece - tolerance)) / (resamples + 1)),
        "floor": float(draws.mean()),
        "brier": brier_score(probabilities, labels),
        "bins": bins,
        "resamples": resamples,
    }


def datapoint_residuals(
    probabilities: Sequence[Sequence[Any]], p: np.ndarray, y: np.ndarray, bins: int
) -> np.ndarray:
    """(datapoints, bins): per datapoint (a row of ``probabilities``) and bin the sum of label
    - P(yes) over its sentences in the bin (``p``, ``y``: the rows flattened, :func:`_flat`)."""
    sizes = [len(row) for row in probabilities]
    rows = np.repeat(np.arange(len(sizes)), sizes)
    index = np.minimum((p * bins).astype(int), bins - 1)
    parts = np.zeros((len(sizes), bins))
    np.add.at(parts, (rows, index), y - p)
    return parts


def sign_flip_eces(parts: np.ndarray, sentences: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` null ECEs sum_b |sum_d e_d parts_db| / ``sentences``, e_d = +-1 at random
    per datapoint and draw (seeded)."""
    rng = np.random.default_rng(seed)
    block = max(1, 2_000_000 // max(len(parts), 1))
    null = []
    for start in range(0, resamples, block):
        signs = rng.choice((-1.0, 1.0), size=(min(block, resamples - start), len(parts)))
        null.append(np.abs(signs @ parts).sum(axis=1) / sentences)
    return np.concatenate(null)
