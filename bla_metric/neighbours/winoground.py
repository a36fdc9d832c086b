"""Winoground's metrics (Thrush et al., CVPR 2022), in plain NumPy: text, image and group scores
with strict ``>`` (paper eqs. 1-3); ties fail. Input: one 2x2 score matrix per example (rows:
images 0, 1; columns: captions 0, 1), checked as :mod:`bla_metric.formulas` checks scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bla_metric.formulas import _scores

WINOGROUND_METRICS = ("text_score", "image_score", "group_score")


def _matrices(scores: Any) -> np.ndarray:
    """Validated Winoground scores as an array (n, 2, 2): [example, image, caption]."""
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__"):
        raise ValueError("predictions must be a list with one 2x2 score matrix per example")
    flat = []
    for i, matrix in enumerate(scores):
        array = np.asarray(matrix, dtype=object)
        if array.shape != (2, 2):
            raise ValueError(
                f"datapoint {i}: predictions must be a 2x2 matrix [image][caption], "
                f"got shape {array.shape}"
            )
        flat.append([matrix[0][0], matrix[0][1], matrix[1][0], matrix[1][1]])
    _scores(flat, "predictions")  # numbers, finite; errors name the datapoint
    return np.asarray(flat, dtype=float).reshape(-1, 2, 2)


def winoground_outcomes(scores: Any) -> dict[str, np.ndarray]:
    """Per example: text, image and group success (booleans, strict comparisons).

    text: s(C0,I0) > s(C1,I0) and s(C1,I1) > s(C0,I1); image: s(C0,I0) > s(C0,I1) and
    s(C1,I1) > s(C1,I0); group: both. ``scores[k][i][c]`` = s(caption c, image i).
    """
    s = _matrices(scores)
    text = (s[:, 0, 0] > s[:, 0, 1]) & (s[:, 1, 1] > s[:, 1, 0])
    image = (s[:, 0, 0] > s[:, 1, 0]) & (s[:, 1, 1] > s[:, 0, 1])
    return {"text_score": text, "image_score": image, "group_score": text & image}


def winoground_metrics(scores: Any, groups: Sequence[Any] | None = None) -> dict[str, Any]:
    """Text, image and group score (shares of examples) and ``n``; ``per_group`` (e.g. by the
    ``collapsed_tag`` Object / Relation / Both) when ``groups`` gives one label per example."""
    outcomes = winoground_outcomes(scores)
    n = len(outcomes["text_score"])
    result: dict[str, Any] = {k: float(v.mean()) for k, v in outcomes.items()}
    result["n"] = n
    if groups is not None:
        if len(groups) != n:
            raise ValueError(f"groups has {len(groups)} labels but there are {n} examples")
        names = np.asarray([str(g) for g in groups])
        result["per_group"] = {
            name: {
                **{k: float(v[names == name].mean()) for k, v in outcomes.items()},
                "n": int((names == name).sum()),
            }
            for name in sorted(set(names.tolist()))
        }
    return result
