"""The formulas of prompt sensitivity, image gain and ranking agreement
(bla_metric.stats.robustness)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bla_metric.stats import robustness

LABELS = [[1, 1, 0, 0]] * 200


def scores(rng: np.random.Generator, signal: float) -> list[list[float]]:
    """Four scores per datapoint, the true two raised by ``signal`` on average."""
    return (rng.normal(size=(200, 4)) + signal * np.array([1, 1, 0, 0])).tolist()


def test_kendall_tau_is_tau_b() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, 30), rng.integers(0, 4, 30)  # many ties
    assert robustness.kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic)
    assert robustness.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert math.isnan(robustness.kendall_tau([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="equal length"):
        robustness.kendall_tau([1, 2], [1, 2, 3])


def test_sensitivity_separates_a_worse_template_and_ties_equal_ones() -> None:
    rng = np.random.default_rng(1)
    good = scores(rng, 3.0)
    result = robustness.template_sensitivity(
        {"a": good, "same": good, "chance": scores(rng, 0.0)}, LABELS, resamples=500
    )
    assert result["best"] in ("a", "same") and result["worst"] == "chance"
    assert set(result["may_be_best"]) == {"a", "same"}
    low, high = result["spread"]["ci"]
    assert 0 < low <= result["spread"]["value"] <= high
    value = result["templates"]["a"]["value"]
    assert result["templates"]["a"]["ci"][0] <= value <= result["templates"]["a"]["ci"][1]


def test_image_gain_flags_a_model_that_does_not_use_the_image() -> None:
    rng = np.random.default_rng(2)
    real = scores(rng, 3.0)
    same = robustness.image_gain(real, real, LABELS, resamples=200)
    # the same gain (0) on every resample is no evidence: never "answers from priors"
    assert same["gain"] == 0.0 and same["variation"] is False
    assert same["outcome"] == "inconclusive" and not same["from_priors"]
    seeing = robustness.image_gain(real, scores(rng, 0.0), LABELS, resamples=200)
    assert seeing["gain"] > 0 and seeing["ci"][0] > 0 and not seeing["from_priors"]


@pytest.mark.parametrize("n", [8, 20])
def test_image_gain_of_tied_scores_is_inconclusive_not_equivalent(n: int) -> None:
    """A random-weight model: every datapoint's four scores equal in both conditions (sentence
    accuracy 0.5 everywhere). The intervals have width 0; the outcome is no equivalence."""
    tied = [[0.5] * 4] * n
    gain = robustness.image_gain(tied, tied, [[1, 1, 0, 0]] * n, resamples=200)
    assert gain["variation"] is False and gain["outcome"] == "inconclusive"
    assert not gain["from_priors"]
    shifted = robustness.image_gain(
        [[1.0, 0.9, 0.1, 0.0]] * n, tied, [[1, 1, 0, 0]] * n, resamples=200
    )
    assert shifted["gain"] == 0.5 and shifted["outcome"] == "inconclusive"


def test_template_statements_of_tied_scores_are_undefined() -> None:
    tied = [[0.5] * 4] * 8
    result = robustness.template_sensitivity(
        {"a": tied, "b": tied}, [[1, 1, 0, 0]] * 8, resamples=50
    )
    assert math.isnan(result["omnibus"]["statistic"]) and not result["omnibus"]["templates_matter"]
    assert result["may_be_best"] == ["a", "b"]


def test_task_order_and_ranking_agreement() -> None:
    same = {"a": {"ap": 0.6, "co": 0.5}, "b": {"ap": 0.7, "co": 0.4}}
    assert robustness.task_order(same) == {
        "orders": {"a": ["ap", "co"], "b": ["ap", "co"]},
        "changes": False,
    }
    assert robustness.task_order({**same, "c": {"ap": 0.4, "co": 0.5}})["changes"] is True
    values = {"a": {"m1": 0.5, "m2": 0.6, "m3": 0.7}, "b": {"m1": 0.7, "m2": 0.6, "m3": 0.5}}
    agreement = robustness.ranking_agreement(values)
    assert agreement["models"] == ["m1", "m2", "m3"]
    assert agreement["pairs"] == [{"a": "a", "b": "b", "tau": -1.0}]


def test_cochran_q_and_chi2_tail_equal_statsmodels_and_scipy() -> None:
    from statsmodels.stats.contingency_tables import cochrans_q

    from bla_metric.stats import significance

    outcomes = np.random.default_rng(3).integers(0, 2, (80, 5))
    ours, theirs = significance.cochran_q(outcomes), cochrans_q(outcomes)
    assert ours["statistic"] == pytest.approx(theirs.statistic)
    assert ours["p_value"] == pytest.approx(theirs.pvalue) and ours["df"] == 4
    for df in (1, 2, 5, 12):
        for x in (0.3, 4.0, 40.0):
            assert significance.chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-9)
    assert math.isnan(significance.cochran_q(np.ones((6, 3)))["p_value"])  # no mixed datapoint


def test_equal_templates_are_not_told_apart_and_the_range_is_resampled_whole() -> None:
    rng = np.random.default_rng(6)
    equal = {f"t{k}": scores(rng, 1.0) for k in range(5)}
    result = robustness.template_sensitivity(equal, LABELS, resamples=300)
    assert set(result["may_be_best"]) == set(equal)
    assert not result["omnibus"]["templates_matter"] and result["omnibus"]["p_value"] > 0.05
    low, high = result["spread"]["ci"]
    assert low > 0 and high > result["spread"]["value"]  # the range of 5 noisy equals


def test_image_gain_outcomes_follow_the_equivalence_test() -> None:
    from statsmodels.stats.weightstats import ttost_paired

    from bla_metric.stats import ranks, significance

    rng = np.random.default_rng(5)
    labels = [[1, 1, 0, 0]] * 2000
    base = rng.normal(size=(2000, 4)) + 1.0 * np.array([1, 1, 0, 0])
    control = base.copy()
    moved = rng.choice(2000, 300, replace=False)
    control[moved] = control[rng.permutation(moved)]  # the same distribution, 15% rows moved
    gain = robustness.image_gain(base.tolist(), control.tolist(), labels, resamples=400)
    assert gain["outcome"] == "equivalent" and gain["from_priors"] and gain["margin"] == 0.02
    # the t-based two one-sided tests of statsmodels reach the same verdict
    per = [
        ranks.per_datapoint(
            "ranking", "sentence_accuracy", significance.datapoint_stats(x.tolist(), labels)
        )
        for x in (base, control)
    ]
    assert ttost_paired(per[0], per[1], -0.02, 0.02)[0] < 0.05
    small = robustness.image_gain(base[:40].tolist(), control[:40].tolist(), labels[:40])
    assert small["outcome"] == "inconclusive" and not small["from_priors"]
    chance = rng.normal(size=(2000, 4)).tolist()
    assert robustness.image_gain(base.tolist(), chance, labels, resamples=200)["outcome"] == "helps"
    assert robustness.image_gain(chance, base.tolist(), labels, resamples=200)["outcome"] == "hurts"
    with pytest.raises(ValueError, match="margin"):
        robustness.image_gain(chance, chance, labels, resamples=10, margin=0)


def test_task_order_and_tau_report_how_often_they_recur() -> None:
    values = {"a": {"ap": 0.6, "co": 0.5}, "b": {"ap": 0.4, "co": 0.5}}
    draws = {
        "a": {"ap": np.array([0.6, 0.6, 0.4, 0.6]), "co": np.full(4, 0.5)},
        "b": {"ap": np.array([0.4, 0.6, 0.4, 0.4]), "co": np.full(4, 0.5)},
    }
    order = robustness.task_order(values, draws)
    assert order["changes"] and order["recurs"] == 0.5
    models = {"a": {"m1": 0.5, "m2": 0.6}, "b": {"m1": 0.7, "m2": 0.6}}
    resampled = {
        "a": {"m1": np.array([0.5, 0.7, 0.5]), "m2": np.array([0.6, 0.6, 0.6])},
        "b": {"m1": np.array([0.7, 0.7, 0.5]), "m2": np.array([0.6, 0.6, 0.6])},
    }
    (pair,) = robustness.ranking_agreement(models, resampled)["pairs"]
    assert pair["tau"] == -1.0 and pair["sign_recurs"] == pytest.approx(1 / 3)
