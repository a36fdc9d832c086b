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
    """``ece`` with ``ci`` (95% percentile interval over bootstrap resamples of the datapoints,
    shifted by the bootstrap's bias and clipped at 0: resampling inflates ECE, so the plain
    percentile interval would sit above it),
    ``floor`` (the mean ECE of perfectly calibrated labels: each sentence true with its own
    P(yes), over ``resamples`` // 5 draws; an ECE near it is no evidence of miscalibration) and
    the Brier score ``brier``."""
    p, y = _flat(probabilities, labels)
    rows = np.repeat(np.arange(len(probabilities)), [len(row) for row in probabilities])
    index = np.minimum((p * bins).astype(int), bins - 1)
    cell = rows * bins + index  # (datapoint, bin)
    shape = len(probabilities) * bins
    per = np.stack(  # per datapoint and bin: sentences, sum of P(yes), true sentences
        [np.bincount(cell, weights=w, minlength=shape) for w in (np.ones_like(p), p, y)], axis=1
    ).reshape(len(probabilities), bins, 3)
    rng = np.random.default_rng(seed)
    draws = []
    block = max(1, 200_000 // max(len(probabilities), 1))
    for start in range(0, resamples, block):
        picks = rng.integers(0, len(probabilities), (min(block, resamples - start), len(per)))
        draws.append(_ece_of(per[picks].sum(axis=1)))
    floors = []
    for _ in range(max(1, resamples // 5)):
        fake = (rng.random(p.size) < p).astype(float)
        sums = np.stack(
            [np.bincount(index, weights=w, minlength=bins) for w in (np.ones_like(p), p, fake)],
            axis=1,
        )
        floors.append(_ece_of(sums[None])[0])
    ece = float(_ece_of(per.sum(axis=0)[None])[0])
    resampled = np.concatenate(draws)
    low, high = np.percentile(resampled, [2.5, 97.5]) - (resampled.mean() - ece)
    return {
        "ece": ece,
        "ci": [float(max(0.0, low)), float(max(0.0, high))],
        "floor": float(np.mean(floors)),
        "brier": brier_score(probabilities, labels),
        "bins": bins,
        "resamples": resamples,
    }


def _ece_of(sums: np.ndarray) -> np.ndarray:
    """ECE per row of ``sums`` (rows, bins, 3: sentences, sum of P(yes), true sentences)."""
    count, confidence, true = sums[..., 0], sums[..., 1], sums[..., 2]
    gap = np.abs(true - confidence)  # n_b |accuracy_b - confidence_b|
    return gap.sum(axis=1) / count.sum(axis=1)
