"""Scoring a sentence by its likelihood under a generative model, and its correction for the
language prior.

- ``caption``: log P(t | i), the sum of the log-probabilities of the sentence's tokens after the
  image (VisualGPTScore, Lin et al., ICML 2024); higher ranks higher.
- ``caption-pmi``: log P(t | i) - alpha * log P(t | no image): with alpha = 1 the pointwise mutual
  information of sentence and image. BLA's true and false sentences share their words, so the
  prior separates them only through word order; the difference asks whether the image changes
  which order is likely.

alpha is chosen on a learning split (:func:`choose_alpha`, never on the scored split) or given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .formulas import ranking_metrics

SCORES = ("yes-no", "caption", "caption-pmi")
"""The questions a generative model can be asked: P(yes) to the yes/no question, the caption's
likelihood, or the likelihood corrected for the prior."""
LIKELIHOOD_SCORES = SCORES[1:]
"""The scores that ask for the sentence's likelihood (a run is labelled with its score)."""
ALPHA_GRID = tuple(round(0.1 * k, 1) for k in range(0, 16))
"""The alphas :func:`choose_alpha` tries: 0.0, 0.1, ..., 1.5."""


def pmi(log_p_image: float, log_p_prior: float, alpha: float) -> float:
    """log P(t | i) - alpha * log P(t | no image)."""
    return float(log_p_image) - float(alpha) * float(log_p_prior)


def pmi_rows(
    log_p_image: Sequence[Sequence[float]], log_p_prior: Sequence[Sequence[float]], alpha: float
) -> list[list[float]]:
    """:func:`pmi` of every sentence of every datapoint (rows of sentences)."""
    return [
        [pmi(c, p, alpha) for c, p in zip(conditional, prior, strict=True)]
        for conditional, prior in zip(log_p_image, log_p_prior, strict=True)
    ]


def choose_alpha(
    log_p_image: Sequence[Sequence[float]],
    log_p_prior: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    grid: Sequence[float] = ALPHA_GRID,
) -> tuple[float, float]:
    """(alpha, its sentence accuracy): the alpha of ``grid`` whose PMI ranks the true sentences
    of the datapoints (a learning split's) best by sentence accuracy; a tie keeps the smallest
    alpha (the least correction)."""
    if not labels:
        raise ValueError("choose_alpha: no datapoints to choose alpha on")
    best: tuple[float, float] | None = None
    for alpha in grid:
        accuracy = ranking_metrics(pmi_rows(log_p_image, log_p_prior, alpha), labels)[
            "sentence_accuracy"
        ]
        if best is None or accuracy > best[1] + 1e-12:
            best = (float(alpha), float(accuracy))
    return best


def reversal_rate(
    log_p_image: Sequence[Sequence[float]],
    log_p_prior: Sequence[Sequence[float]],
    alpha: float,
    labels: Sequence[Sequence[int]],
) -> float:
    """Share of datapoints whose top-k sentences (k = its number of true sentences, the ranking
    view's choice) under PMI differ from those under the likelihood alone: how often the prior
    correction reverses the likelihood's choice (NaN for no datapoints)."""
    if not labels:
        return float("nan")
    corrected = pmi_rows(log_p_image, log_p_prior, alpha)
    changed = [
        _top(plain, sum(truth)) != _top(fixed, sum(truth))
        for plain, fixed, truth in zip(log_p_image, corrected, labels, strict=True)
    ]
    return float(np.mean(changed))


def _top(scores: Sequence[float], k: int) -> frozenset[int]:
    """Positions of the ``k`` highest scores (ties broken by position, as a stable sort)."""
    order = sorted(range(len(scores)), key=lambda j: (-scores[j], j))
    return frozenset(order[:k])
