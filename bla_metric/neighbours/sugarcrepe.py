"""SugarCrepe's and SugarCrepe++'s metrics, in plain NumPy, as their authors compute them.

- SugarCrepe (Hsieh et al., NeurIPS 2023 D&B; ``main_eval.py`` of RAIVNLab/sugar-crepe): an item
  is right when the positive caption scores strictly above the negative (``pos_score >
  neg_score``); accuracy per subset.
- SugarCrepe++ (Dumpala et al., NeurIPS 2024 D&B): ITT, an item is right when both positive
  captions score strictly above the negative one against the image; TOT, the text-only task, an
  item is right when the cosine of the two positives' text embeddings is strictly above that of
  each positive with the negative (:func:`text_only_accuracy`).

Inputs follow :mod:`bla_metric.formulas` (one score list per datapoint, higher = more likely true,
and one 0/1 label list); ties never count as a success, as in BLA.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bla_metric.neighbours.pairwise import pairwise_accuracy

SUGARCREPE_SUBSETS: dict[str, str] = {
    "replace_obj": "Replace object",
    "replace_att": "Replace attribute",
    "replace_rel": "Replace relation",
    "swap_obj": "Swap object",
    "swap_att": "Swap attribute",
    "add_obj": "Add object",
    "add_att": "Add attribute",
}
"""SugarCrepe's seven subsets (upstream ``data/<subset>.json``) -> title, in the paper's order."""


SUGARCREPE_PP_SUBSETS: dict[str, str] = {
    k: v for k, v in SUGARCREPE_SUBSETS.items() if not k.startswith("add_")
}
"""SugarCrepe++'s five subsets (``data/<subset>.json`` of Aman-J/SugarCrepe_pp): SugarCrepe's
replace and swap subsets with a second positive caption."""


def image_to_text_accuracy(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]
) -> float:
    """Share of items whose every true caption scores strictly above every false one: SugarCrepe
    (one positive, one negative) and SugarCrepe++'s ITT (two positives, one negative)."""
    return pairwise_accuracy(scores, labels)


def text_only_margins(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> np.ndarray:
    """Per item, how far the similarity of its two true captions lies above the highest
    similarity of a true caption with a false one (SugarCrepe++'s text-only task, TOT: the item
    is right when the margin is strictly positive, a tie when it is 0).

    ``similarities[k]`` is item ``k``'s caption x caption matrix (upstream: the cosine of the
    text encoder's embeddings of each caption alone), its captions in the order of
    ``labels[k]``; an item has exactly two true captions and at least one false one (P1, P2,
    N). Only the entries between a true caption and another caption are read."""
    if len(similarities) != len(labels):
        raise ValueError(f"similarities has {len(similarities)} items but labels has {len(labels)}")
    margins = []
    for k, (matrix, row) in enumerate(zip(similarities, labels, strict=True)):
        values, truth = np.asarray(matrix, float), np.asarray(row, int)
        n = len(truth)
        if values.shape != (n, n):
            raise ValueError(
                f"item {k}: similarities must be {n} x {n} (one row and column per caption), "
                f"not {list(values.shape)}"
            )
        true, false = np.flatnonzero(truth == 1), np.flatnonzero(truth == 0)
        if len(true) != 2 or len(false) == 0:
            raise ValueError(
                f"item {k}: the text-only task needs two true captions and a false one, got "
                f"labels {list(row)}"
            )
        positives = values[true[0], true[1]]
        margins.append(positives - values[np.ix_(true, false)].max())
    return np.asarray(margins, float)


def text_only_outcomes(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> np.ndarray:
    """Each item's 0/1 outcome of SugarCrepe++'s TOT, as floats: sim(P1, P2) strictly above
    both sim(P1, N) and sim(P2, N) (``evaluate_ulms.py`` and ``VLMs/test_*.py`` of
    Sri-Harsha/scpp: ``p1_p2 > p1_ref and p1_p2 > p2_ref``; see :func:`text_only_margins`)."""
    return (text_only_margins(similarities, labels) > 0).astype(float)


def text_only_accuracy(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> dict[str, Any]:
    """SugarCrepe++'s text-only accuracy (TOT): ``tot``, the share of items whose two positive
    captions are strictly more similar to each other than either is to the negative;
    ``ties``, the items whose positives' similarity equals the highest positive-negative one;
    ``n``. An empty list is a ValueError."""
    if not len(similarities):
        raise ValueError("similarities is empty: there must be at least one item")
    margins = text_only_margins(similarities, labels)
    return {
        "tot": float((margins > 0).mean()),
        "ties": int((margins == 0).sum()),
        "n": len(margins),
    }
