"""bla_metric.neighbours.valse: acc_r, AUROC and the binary view on hand-made cases, ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bla_metric.neighbours.valse import auroc, valse_metrics

CF = [1, 0]  # caption, foil


def test_acc_r_is_strict_and_counts_ties():
    scores = [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [3.0, 2.0]]
    result = valse_metrics(scores, [CF] * 4)
    assert result["acc_r"] == 0.5  # the tie fails (Table 2 caption: caption > foil)
    assert result["ties"] == 1
    assert result["n"] == 4
    assert "accuracy" not in result  # contrastive scores: no binary view (as CLIP in the paper)


def test_auroc_mann_whitney_with_half_ties():
    # captions 0.9, 0.2, 0.5; foils 0.1, 0.8, 0.5. Pairs (c > f): 0.9 beats 0.1, 0.8, 0.5 (3);
    # 0.2 beats 0.1 (1); 0.5 beats 0.1 (1) and ties 0.5 (1/2): 5.5 of 9.
    scores = [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]
    assert auroc(scores, [CF] * 3) == pytest.approx(5.5 / 9)
    assert auroc([[1, 1], [1, 1]], [CF] * 2) == 0.5  # all tied: chance
    assert auroc([[2, 1], [3, 0]], [CF] * 2) == 1.0
    assert auroc([[0, 1], [0, 3]], [CF] * 2) == 0.0


def test_auroc_matches_brute_force():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(30, 2)).astype(float).tolist()  # many ties
    pos = [s[0] for s in scores]
    neg = [s[1] for s in scores]
    expected = np.mean(
        [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
    )
    assert auroc(scores, [CF] * 30) == pytest.approx(expected)


def test_valse_binary_view_per_class_recall():
    # probabilities: caption matched when >= 0.5, foil rejected when < 0.5
    scores = [[0.9, 0.2], [0.6, 0.7], [0.4, 0.3], [0.5, 0.5]]
    result = valse_metrics(scores, [CF] * 4, probabilistic=True)
    # captions: 0.9 ok, 0.6 ok, 0.4 missed, 0.5 ok (>= threshold) -> p_c = 3/4
    # foils: 0.2 ok, 0.7 missed, 0.3 ok, 0.5 missed -> p_f = 2/4
    assert result["p_c"] == 0.75
    assert result["p_f"] == 0.5
    assert result["min_p_c_p_f"] == 0.5
    assert result["accuracy"] == pytest.approx(5 / 8)
    assert result["accuracy"] == pytest.approx((result["p_c"] + result["p_f"]) / 2)
    assert result["acc_r"] == 0.5  # [0.9>0.2], [0.6<0.7], [0.4>0.3], tie


def test_valse_bad_input_names_the_datapoint():
    with pytest.raises(ValueError, match="datapoint 1"):
        valse_metrics([[1, 0], [float("nan"), 0]], [CF, CF])
    with pytest.raises(ValueError, match="no false sentence"):
        valse_metrics([[1, 0]], [[1, 1]])
