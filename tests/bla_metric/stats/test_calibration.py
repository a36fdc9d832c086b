"""The test of calibration respects BLA's datapoints: two true and two false sentences each."""

from __future__ import annotations

import numpy as np
import pytest
from bla_eval.simulations import coverage

from bla_metric.stats import calibration


def _rejections(design: str, n: int, runs: int, seed: int, sure: bool = False) -> tuple:
    """(share of runs the datapoint test calls miscalibrated, share the per-sentence redraws
    do) over ``runs`` simulated runs of ``design`` (``sure``: the model 40% too sure)."""
    rng = np.random.default_rng(seed)
    new = old = 0
    for run in range(runs):
        p, y = coverage.calibrated_run(design, n, rng)
        shown = coverage.too_sure(p) if sure else p
        new += calibration.calibration_summary(shown, y, resamples=200, seed=run)["p_value"] < 0.05
        old += coverage.independent_null_p(shown, y, 200, run) < 0.05
    return new / runs, old / runs


def test_a_calibrated_model_on_blas_design_is_not_called_miscalibrated() -> None:
    """One pair at pi and the other at 1 - pi, the true pair drawn with pi: calibrated. The
    datapoint test keeps its level (150 seeded runs of 100 datapoints); redrawing each
    sentence on its own calls nearly half of them miscalibrated."""
    new, old = _rejections(coverage.CALIBRATION_DESIGNS[0], 100, 150, 0)
    assert new <= 0.09 and old >= 0.3, (new, old)
    new, old = _rejections(coverage.CALIBRATION_DESIGNS[1], 100, 150, 1)
    assert new <= 0.09 and old <= 0.09, (new, old)


def test_a_model_too_sure_is_found_on_600_datapoints() -> None:
    new, _ = _rejections(coverage.CALIBRATION_DESIGNS[0], 600, 40, 2, sure=True)
    assert new >= 0.4, new


def test_the_test_sees_datapoints_not_sentence_order() -> None:
    """The sign of a datapoint's residuals flips as one: reordering sentences within each
    datapoint changes nothing; the floor is the null draws' mean, near a calibrated ECE."""
    rng = np.random.default_rng(3)
    p, y = coverage.calibrated_run(coverage.CALIBRATION_DESIGNS[0], 200, rng)
    order = np.argsort(rng.random(p.shape), axis=1)
    first = calibration.calibration_summary(p, y, resamples=300, seed=5)
    again = calibration.calibration_summary(
        np.take_along_axis(p, order, 1), np.take_along_axis(y, order, 1), resamples=300, seed=5
    )
    assert again == pytest.approx(first)
    parts = calibration.datapoint_residuals(p, p.ravel(), y.ravel(), 10)
    assert parts.shape == (200, 10)
    assert np.abs(parts.sum(axis=0)).sum() / p.size == first["ece"]
    assert 0.5 * first["floor"] < first["ece"] < 3 * first["floor"]
