"""MMVP-VLM's metrics (Tong et al., CVPR 2024; ``scripts/evaluate_vlm.py`` of tsb0601/MMVP), in
plain NumPy.

A pair of images with one statement each, scored as one 2x2 matrix ``[image][statement]`` as
Winoground's (:func:`bla_metric.neighbours.winoground.winoground_outcomes`); a statement is right
when its own image gets the higher softmax over the two images (> 0.5, i.e. the strictly higher
score; upstream's tie gives the second image, so its second statement wins ties and ours does
not); a pair is right when both statements are. Pair accuracy per visual pattern, and their mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bla_metric.neighbours.aro import macro_accuracy
from bla_metric.neighbours.winoground import winoground_outcomes

MMVP_PATTERNS: tuple[str, ...] = (
    "Orientation and Direction",
    "Presence of Specific Features",
    "State and Condition",
    "Quantity and Count",
    "Positional and Relational Context",
    "Color and Appearance",
    "Structural Characteristics",
    "Texts",
    "Viewpoint and Perspective",
)
"""MMVP-VLM's nine visual patterns, in upstream ``evaluate_vlm.py``'s order (15 pairs each)."""


def mmvp_pair_outcomes(scores: Any) -> np.ndarray:
    """Per pair (2x2 ``[image][statement]``, statement ``k`` true of image ``k``): both
    statements give their own image the strictly higher score (Winoground's image score)."""
    return winoground_outcomes(scores)["image_score"]


def mmvp_metrics(scores: Any, patterns: Sequence[str]) -> dict[str, Any]:
    """Pair accuracy per visual pattern (``per_pattern``: {pattern: {"accuracy", "n"}}), their
    mean (``pair_accuracy``, upstream's average over the nine patterns) and ``n``."""
    outcomes = mmvp_pair_outcomes(scores)
    summary = macro_accuracy(outcomes, patterns)
    return {
        "pair_accuracy": summary["accuracy"],
        "per_pattern": summary["per_group"],
        "n": len(outcomes),
    }
