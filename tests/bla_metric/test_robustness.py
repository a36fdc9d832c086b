"""The formulas of prompt sensitivity, image gain and ranking agreement (bla_metric.robustness)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bla_metric import robustness

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
    assert set(result["indistinguishable_from_best"]) == {"a", "same"}
    low, high = result["spread"]["ci"]
    assert 0 < low <= result["spread"]["value"] <= high
    value = result["templates"]["a"]["value"]
    assert result["templates"]["a"]["ci"][0] <= value <= result["templates"]["a"]["ci"][1]


def test_image_gain_flags_a_model_that_does_not_use_the_image() -> None:
    rng = np.random.default_rng(2)
    real = scores(rng, 3.0)
    same = robustness.image_gain(real, real, LABELS, resamples=200)
    assert same["gain"] == 0.0 and same["ci"] == [0.0, 0.0] and same["from_priors"]
    seeing = robustness.image_gain(real, scores(rng, 0.0), LABELS, resamples=200)
    assert seeing["gain"] > 0 and seeing["ci"][0] > 0 and not seeing["from_priors"]


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
