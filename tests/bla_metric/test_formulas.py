"""bla_metric.formulas: every output against hand-computed cases, the tie rule, bad inputs."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bla_metric.formulas import (
    THESIS_PAIRS,
    binary_metrics,
    compute,
    pairwise_preferences,
    ranking_metrics,
    threshold_labels,
    top_k_labels,
)

TTFF = [1, 1, 0, 0]
AP = ["TA", "TP", "FA", "FP"]
CO = ["TP1", "TP2", "FP1", "FP2"]


# ----------------------------------------------------------------------------- ranking view


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([4, 3, 2, 1], (1.0, 1.0, 0.0)),  # both true on top
        ([2, 1, 4, 3], (0.0, 0.0, 1.0)),  # both false on top
        ([4, 2, 3, 1], (0.5, 0.0, 0.0)),  # one true in the top two
        ([1, 4, 3, 2], (0.5, 0.0, 0.0)),
        ([0.5, 0.5, 0.5, 0.5], (0.5, 0.0, 0.0)),  # the tie rule
        ([1.0, 0.5, 0.5, 0.0], (0.75, 0.0, 0.0)),  # true and false tied for place two
        ([3, 3, 1, 1], (1.0, 1.0, 0.0)),  # ties only within a class
        ([2, 1, 2, 0], (0.5, 0.0, 0.0)),  # a true and a false tied at the top: both in it
        ([1, 1, 1, 2], (1 / 3, 0.0, 0.0)),  # a false on top, three tied for place two
    ],
)
def test_ranking_hand_cases(scores, expected):
    result = ranking_metrics([scores], [TTFF])
    got = (result["sentence_accuracy"], result["set_accuracy"], result["set_error"])
    assert got == pytest.approx(expected)
    assert result["n"] == 1


def test_ranking_averages_over_datapoints_and_pools_sentences():
    scores = [[4, 3, 2, 1], [2, 1, 4, 3], [4, 2, 3, 1], [0.5] * 4]
    result = ranking_metrics(scores, [TTFF] * 4)
    assert result == {
        "sentence_accuracy": pytest.approx((4 + 0 + 2 + 2) / 16),
        "set_accuracy": 0.25,
        "set_error": 0.25,
        "n": 4,
    }


def test_ranking_ragged_and_label_order():
    # 2 sentences (1 true, on top: 2 of 2 right); 3 sentences (2 true, ranked T, F, T: 1 of 3
    # right); 4 sentences with the only true one last (the top false and the true are wrong:
    # 2 of 4 right); labels in any order.
    scores = [[0.9, 0.1], [0.6, 0.8, 0.5], [0.4, 0.3, 0.2, 0.1]]
    labels = [[1, 0], [0, 1, 1], [0, 0, 0, 1]]
    result = ranking_metrics(scores, labels)
    assert result["sentence_accuracy"] == pytest.approx((2 + 1 + 2) / 9)
    assert result["set_accuracy"] == pytest.approx(1 / 3)
    assert result["set_error"] == pytest.approx(1 / 3)  # every false above the single true


def test_ranking_accepts_numpy_arrays():
    scores = np.array([[4.0, 3.0, 2.0, 1.0], [2.0, 1.0, 4.0, 3.0]])
    labels = np.array([TTFF, TTFF])
    assert ranking_metrics(scores, labels) == ranking_metrics(scores.tolist(), labels.tolist())


def _expected_by_enumeration(scores: list[float], labels: list[int]) -> float:
    """Mean sentence accuracy over every tie-breaking order (brute force)."""
    k = sum(labels)
    total = 0.0
    orders = list(itertools.permutations(range(len(scores))))
    for tie_break in orders:
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], tie_break[i]))
        top = set(ranked[:k])
        total += sum((i in top) == bool(labels[i]) for i in range(len(scores))) / len(scores)
    return total / len(orders)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 2), min_size=2, max_size=5).flatmap(
        lambda s: st.tuples(
            st.just(s),
            st.lists(st.integers(0, 1), min_size=len(s), max_size=len(s)).filter(
                lambda y: 0 < sum(y) < len(y)
            ),
        )
    )
)
def test_sentence_accuracy_is_expectation_over_random_tie_breaking(case):
    scores, labels = case
    result = ranking_metrics([scores], [labels])
    assert result["sentence_accuracy"] == pytest.approx(_expected_by_enumeration(scores, labels))


distinct4 = st.lists(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=4, max_size=4, unique=True
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(distinct4, st.permutations(TTFF)), min_size=1, max_size=30))
def test_identity_without_ties(datapoints):
    scores = [s for s, _ in datapoints]
    labels = [list(y) for _, y in datapoints]
    result = ranking_metrics(scores, labels)
    identity = 0.5 + (result["set_accuracy"] - result["set_error"]) / 2
    assert result["sentence_accuracy"] == pytest.approx(identity)
    assert result["set_accuracy"] + result["set_error"] <= 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=4, max_size=4), st.permutations(range(4)))
def test_ranking_invariant_to_sentence_order(scores, order):
    permuted = [scores[i] for i in order], [TTFF[i] for i in order]
    assert ranking_metrics([scores], [TTFF]) == ranking_metrics([permuted[0]], [permuted[1]])


# ----------------------------------------------------------------------------- binary view


def test_binary_hand_case():
    result = binary_metrics([[1, 1, 1, 1], [0, 1, 0, 0]], [TTFF, [1, 0, 0, 1]])
    # tp 2+0, fp 2+1, tn 0+1, fn 0+2
    assert result == {
        "accuracy": pytest.approx(3 / 8),
        "precision_true": pytest.approx(2 / 5),
        "precision_false": pytest.approx(1 / 3),
        "recall_true": pytest.approx(2 / 4),
        "recall_false": pytest.approx(1 / 4),
        "all_same_rate": 0.5,
        "n": 2,
    }


def test_binary_zero_denominators_give_zero():
    never_true = binary_metrics([[0, 0, 0, 0]], [TTFF])
    assert never_true["precision_true"] == 0.0
    assert never_true["recall_true"] == 0.0
    assert never_true["precision_false"] == 0.5
    assert never_true["recall_false"] == 1.0
    assert never_true["all_same_rate"] == 1.0
    never_false = binary_metrics([[1, 1, 1, 1]], [TTFF])
    assert never_false["precision_false"] == 0.0
    assert never_false["recall_false"] == 0.0
    assert never_false["precision_true"] == 0.5


def test_threshold_labels():
    assert threshold_labels([[0.1, 0.5, 0.7], [0.49, 0.51]], 0.5) == [[0, 1, 1], [0, 1]]


def test_top_k_labels_breaks_ties_against_true():
    scores = [[1, 1, 1, 1], [3, 1, 2, 2], [3, 2, 2, 1], [0.1, 0.9], [5, 5, 5]]
    labels = [TTFF, TTFF, TTFF, [1, 0], [0, 1, 1]]
    assert top_k_labels(scores, labels) == [
        [0, 0, 1, 1],  # all tied: the two false ones take the top
        [1, 0, 1, 0],
        [1, 0, 1, 0],  # true and false tied for place two: the false one gets it
        [0, 1],
        [1, 1, 0],  # k = 2, the false one first, then one of the true ones
    ]


def test_compute_binary_modes_match_building_blocks():
    scores = [[0.9, 0.2, 0.6, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5]]
    labels = [TTFF] * 3
    by_threshold = compute(scores, labels, mode="binary", threshold=0.5)
    assert by_threshold == binary_metrics(threshold_labels(scores, 0.5), labels)
    by_rank = compute(scores, labels, mode="binary", threshold="top_k")
    assert by_rank == binary_metrics(top_k_labels(scores, labels), labels)
    assert by_rank["all_same_rate"] == 0.0
    # top-2 labelling of 2+2 datapoints: accuracy equals sentence accuracy without ties
    no_ties = scores[:2]
    assert compute(no_ties, labels[:2], mode="binary", threshold="top_k")["accuracy"] == (
        pytest.approx(ranking_metrics(no_ties, labels[:2])["sentence_accuracy"])
    )


def test_compute_binary_hard_labels_and_json():
    result = compute(
        [[1, 1, 1, 1], [1.0, 0.0, 0.0, 0.0]], [TTFF, TTFF], mode="binary", caption_types=AP
    )
    assert result["accuracy"] == pytest.approx(5 / 8)
    assert result["pairwise"]["TA>FA"] == 0.5  # a tie, then 1 > 0
    assert result["pairwise"]["TP>FP"] == 0.0
    assert json.loads(json.dumps(result)) == result


# ----------------------------------------------------------------------------- pairwise


def test_pairwise_active_passive_hand_case():
    scores = [[4, 3, 2, 1], [1, 4, 3, 2], [1, 1, 1, 1]]
    result = pairwise_preferences(scores, AP)
    assert list(result) == [f"{x}>{y}" for x, y in THESIS_PAIRS["active_passive"]]
    assert result == {
        "TA>FA": pytest.approx(1 / 3),
        "TP>FP": pytest.approx(2 / 3),
        "TP>FA": pytest.approx(2 / 3),
        "TA>FP": pytest.approx(1 / 3),
        "TA>TP": pytest.approx(1 / 3),
        "FA>FP": pytest.approx(2 / 3),
    }


def test_pairwise_coordination_per_datapoint_types_and_missing_pairs():
    # types in any order per datapoint; the second datapoint lacks TP2 and FP2 (train-like rows)
    scores = [[0.1, 0.2, 0.3, 0.4], [0.9, 0.1]]
    types = [["FP2", "FP1", "TP2", "TP1"], ["TP1", "FP1"]]
    result = pairwise_preferences(scores, types)
    assert list(result) == [f"{x}>{y}" for x, y in THESIS_PAIRS["coordination"]]
    assert result["TP1>FP1"] == 1.0  # 0.4 > 0.2 and 0.9 > 0.1
    assert result["TP2>FP2"] == 1.0  # 0.3 > 0.1, the second datapoint does not count
    assert result["TP1>TP2"] == 1.0
    assert result["FP1>FP2"] == 1.0


def test_pairwise_other_types_true_before_false():
    scores = [[0.3, 0.2, 0.1], [0.1, 0.5, 0.9]]
    types = [["good", "bad", "worse"], ["good", "bad", "worse"]]
    labels = [[1, 0, 0], [1, 0, 0]]
    assert pairwise_preferences(scores, types, labels) == {
        "good>bad": 0.5,
        "good>worse": 0.5,
        "bad>worse": 0.5,
    }
    flipped = [[0, 0, 1], [0, 0, 1]]
    assert list(pairwise_preferences(scores, types, flipped)) == [
        "worse>good",
        "worse>bad",
        "good>bad",
    ]


def test_pairwise_ties_count_for_neither_order():
    result = pairwise_preferences([[1, 1, 1, 1]], AP)
    assert set(result.values()) == {0.0}


def test_gpt2_active_passive_behaviour_synthetic():
    """Thesis §7.1.1: scores that always put TP and FP on top give set error 0, TP>FA = 1."""
    rng = np.random.default_rng(1)
    passive = rng.random((500, 2)) + 1  # TP, FP in [1, 2)
    active = rng.random((500, 2))  # TA, FA in [0, 1)
    scores = np.column_stack([active[:, 0], passive[:, 0], active[:, 1], passive[:, 1]])
    result = compute(scores.tolist(), [TTFF] * 500, caption_types=AP)
    assert result["set_error"] == 0.0
    assert result["set_accuracy"] == 0.0
    assert result["sentence_accuracy"] == 0.5
    assert result["pairwise"]["TP>FA"] == 1.0
    assert result["pairwise"]["TA>FP"] == 0.0


def test_gpt2_active_passive_behaviour_on_the_release(release_dir):
    """The same check on the real AP sentences, scored by word count: a passive sentence has two
    more words ("is", "by") than its active twin, so both passive sentences always rank on top."""
    records = json.loads((release_dir / "annotations/active_passive_captions.json").read_text())
    groups = [group for record in records for group in record["caption_group"]]
    keys = ("True1", "True2", "False1", "False2")
    scores = [[len(group[key].split()) for key in keys] for group in groups]
    result = compute(scores, [TTFF] * len(scores), caption_types=AP)
    assert result["n"] == len(groups) == 613
    assert result["set_error"] == 0.0
    assert result["pairwise"]["TP>FA"] == 1.0
    assert result["pairwise"]["FA>FP"] == 0.0


# ----------------------------------------------------------------------------- groups, bootstrap


def test_per_group_matches_subsets():
    scores = [[4, 3, 2, 1], [1, 4, 3, 2], [1, 1, 1, 1], [2, 1, 4, 3]]
    groups = ["watch", "feed", "watch", 7]
    result = compute(scores, [TTFF] * 4, caption_types=AP, groups=groups)
    assert list(result["per_group"]) == ["7", "feed", "watch"]
    watch = result["per_group"]["watch"]
    expected = compute([scores[0], scores[2]], [TTFF] * 2, caption_types=AP)
    assert watch == expected
    assert watch["n"] == 2
    assert result["per_group"]["7"]["set_error"] == 1.0
    assert sum(group["n"] for group in result["per_group"].values()) == result["n"]


def test_per_group_binary():
    result = compute([[1, 1, 0, 0], [0, 0, 0, 0]], [TTFF] * 2, mode="binary", groups=["a", "b"])
    assert result["per_group"]["a"]["accuracy"] == 1.0
    assert result["per_group"]["b"]["all_same_rate"] == 1.0


def test_bootstrap_reproducible_and_contains_estimate():
    rng = np.random.default_rng(3)
    scores = rng.random((300, 4)).tolist()
    labels = [TTFF] * 300
    first = compute(scores, labels, bootstrap=200, seed=5)
    again = compute(scores, labels, bootstrap=200, seed=5)
    other = compute(scores, labels, bootstrap=200, seed=6)
    assert first["ci"] == again["ci"]
    assert first["ci"] != other["ci"]
    assert set(first["ci"]) == {"sentence_accuracy", "set_accuracy", "set_error"}
    for metric, (low, high) in first["ci"].items():
        assert 0 <= low <= first[metric] <= high <= 1
        assert high - low < 0.2
    binary = compute(scores, labels, mode="binary", threshold=0.5, bootstrap=100)
    for metric, (low, high) in binary["ci"].items():
        assert low <= binary[metric] <= high
    assert "ci" not in compute(scores, labels)


def test_compute_is_fast_on_100k_datapoints():
    from bla_eval.performance.metric import time_compute

    assert time_compute(100_000, repeats=3) < 1.0


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("predictions", "references", "kwargs", "message"),
    [
        ([[1, 2, 3, 4]] * 2, [TTFF], {}, "predictions has 2 datapoints but references has 1"),
        ([[1, 2, 3, 4], [1, 2, 3]], [TTFF, TTFF], {}, "datapoint 1: predictions has 3"),
        ([[1, 2, 3], [1, 2, 3, 4]], [TTFF, TTFF], {}, "datapoint 0: predictions has 3"),
        ([[1, 2, 3, 4]] * 2 + [[1, math.nan, 3, 4]], [TTFF] * 3, {}, "datapoint 2: .*finite"),
        ([[1, 2, 3, 4], [1, 2, math.inf, 4]], [TTFF] * 2, {}, "datapoint 1: .*finite.*inf"),
        ([[1, 2, 3, 4], [1, 2]], [TTFF, [1, None]], {}, "datapoint 1: references"),
        ([[1, 2, 3, 4]] * 2, [TTFF, [1, 2, 0, 0]], {}, "datapoint 1: .*0 or 1, got 2"),
        ([[1, 2, 3, 4]] * 2, [TTFF, [1, -1, 0, 0]], {}, "datapoint 1: .*0 or 1, got -1"),
        ([[1, 2, 3, 4]] * 2, [TTFF, ["a", "b", "c", "d"]], {}, "datapoint 1: .*0/1"),
        ([[1, 2, 3, 4]] * 2, [TTFF, [0, 0, 0, 0]], {}, "datapoint 1: .*no true"),
        ([[1, 2, 3, 4]] * 3, [TTFF, TTFF, [1, 1, 1, 1]], {}, "datapoint 2: .*no false"),
        ([[1]], [[1]], {}, "datapoint 0: .*no false"),
        ([[], [1, 2]], [[], [1, 0]], {}, "datapoint 0: no sentences"),
        ([1, 2, 3, 4], [TTFF] * 4, {}, "datapoint 0: predictions must hold a list"),
        ([["x", 2, 3, 4]], [TTFF], {}, "datapoint 0: predictions"),
        ([], [], {}, "empty"),
        ([[1, 2, 3, 4]], [TTFF], {"mode": "rank"}, "unknown mode 'rank'"),
        ([[1, 2, 3, 4]], [TTFF], {"groups": ["a", "b"]}, "groups has 2 labels but there are 1"),
        ([[1, 2, 3, 4]], [TTFF], {"groups": "a"}, "groups must be a list"),
        ([[1, 2, 3, 4]], [TTFF], {"caption_types": AP[:3]}, "datapoint 0: caption_types has 3"),
        ([[1, 2, 3, 4]], [TTFF], {"caption_types": [AP, AP]}, "caption_types has 2 datapoints"),
        ([[1, 2, 3, 4]] * 2, [TTFF] * 2, {"caption_types": [AP, AP[:3]]}, "datapoint 1:"),
        ([[1, 2, 3, 4]], [TTFF], {"caption_types": ["TA", "TA", "FA", "FP"]}, "0: .*'TA' occurs"),
        ([[1, 2, 3, 4]], [TTFF], {"threshold": 0.5}, "threshold only applies"),
        ([[0.2, 1, 0, 0]], [TTFF], {"mode": "binary"}, "datapoint 0: .*0 or 1, got 0.2"),
        ([[1, 2, 3, 4]], [TTFF], {"mode": "binary", "threshold": "best"}, "threshold must be"),
        ([[1, 2, 3, 4]], [TTFF], {"bootstrap": -1}, "bootstrap must be"),
        ([[1, 2, 3, 4]], [TTFF], {"bootstrap": 2.5}, "bootstrap must be"),
    ],
)
def test_bad_input_names_datapoint_and_problem(predictions, references, kwargs, message):
    with pytest.raises(ValueError, match=message):
        compute(predictions, references, **kwargs)


def test_bad_input_in_building_blocks():
    with pytest.raises(ValueError, match="datapoint 1: .*finite"):
        threshold_labels([[1, 2], [math.nan, 1]], 0.5)
    with pytest.raises(ValueError, match="threshold must be finite"):
        threshold_labels([[1, 2]], math.nan)
    with pytest.raises(ValueError, match="datapoint 0: references have no false"):
        top_k_labels([[1, 2]], [[1, 1]])
    with pytest.raises(ValueError, match="datapoint 1: predictions has 2 sentences but references"):
        pairwise_preferences([[1, 2, 3, 4], [1, 2]], [AP, ["TA", "FA"]], [TTFF, TTFF])
    with pytest.raises(ValueError, match="datapoint 0: predictions must be 0 or 1, got 3"):
        binary_metrics([[3, 0, 0, 0]], [TTFF])


# ----------------------------------------------------------------------------- intervals


@pytest.mark.parametrize("n", [1, 8, 30, 100, 613])
def test_share_interval_is_statsmodels_clopper_pearson(n: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    from bla_metric.formulas import share_interval

    for k in sorted({0, 1, 2, n // 3, n // 2, n - 1, n}):
        if 0 <= k <= n:
            expected = proportion_confint(k, n, alpha=0.05, method="beta")
            assert share_interval(k, n) == pytest.approx(list(expected), abs=1e-9)
    assert share_interval(0, n)[0] == 0.0 and share_interval(n, n)[1] == 1.0
    assert all(math.isnan(v) for v in share_interval(0, 0))


def test_set_accuracy_has_one_exact_interval_whatever_the_resamples() -> None:
    """Set accuracy 0/30 is [0, 11.6%] (not the bootstrap's [0, 0]), the same at any seed."""
    from bla_metric.formulas import INTERVAL_METHOD, share_interval

    scores = [[0.1, 0.9, 0.8, 0.0]] * 30  # a false sentence above a true one: set accuracy 0
    found = [
        compute(scores, [TTFF] * 30, bootstrap=b, seed=s)["ci"] for b, s in ((50, 0), (200, 3))
    ]
    assert found[0]["set_accuracy"] == found[1]["set_accuracy"] == share_interval(0, 30)
    assert found[0]["set_accuracy"][1] == pytest.approx(0.1157, abs=1e-4)
    assert found[0]["sentence_accuracy"] == [0.5, 0.5]  # percentile: no variation, width 0
    assert "Clopper-Pearson" in INTERVAL_METHOD


def test_undefined_ratios_and_intervals_without_variation() -> None:
    from bla_metric.formulas import no_variation, undefined_ratios

    never_true = binary_metrics([[0, 0, 0, 0]] * 5, [TTFF] * 5)
    assert never_true["precision_true"] == 0.0  # stored as 0.0 (the documented value) ...
    assert undefined_ratios(never_true) == ["precision_true"]  # ... and printed "undefined"
    always_true = binary_metrics([[1, 1, 1, 1]] * 5, [TTFF] * 5)
    assert undefined_ratios(always_true) == ["precision_false"]
    assert undefined_ratios(binary_metrics([[1, 0, 1, 0]] * 5, [TTFF] * 5)) == []
    assert no_variation([0.5, 0.5]) and not no_variation([0.0, 0.1])
    assert not no_variation(None) and not no_variation([float("nan")] * 2)
