"""``bla-eval robustness``: the image gain's outcome and its margin, on constructed records."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from bla_eval.analysis import robustness as report
from bla_eval.analysis.rundata import Run

from bla_metric.stats import robustness


def _run(n: int = 200) -> Run:
    """A control run whose real and control images give nearly the same scores."""
    rng = np.random.default_rng(0)
    real = rng.normal(size=(n, 4)) + np.array([1, 1, 0, 0])
    control = real + 0.05 * rng.normal(size=(n, 4))
    records = [
        {"id": f"ap-{k:04d}", "labels": [1, 1, 0, 0], "scores": r, "control": {"scores": c}}
        for k, (r, c) in enumerate(zip(real.tolist(), control.tolist(), strict=True))
    ]
    labels = [r["labels"] for r in records]
    gain = robustness.image_gain(real.tolist(), control.tolist(), labels)
    results = {
        "model": "m",
        "benchmark": "bla",
        "control": {
            "kind": "blank",
            "tasks": {"active_passive": {"image_gain": gain}},
            "answers_from_priors": gain["from_priors"],
        },
    }
    return Run(path=Path("run"), results=results, records={"active_passive": records})


def test_a_wider_margin_turns_an_inconclusive_gain_equivalent() -> None:
    run = _run(40)
    stored = run.results["control"]["tasks"]["active_passive"]["image_gain"]
    assert stored["margin"] == 0.02 and stored["outcome"] == "inconclusive"
    wide = report.with_margin(run, 0.10)
    gain = wide["control"]["tasks"]["active_passive"]["image_gain"]
    assert gain["margin"] == 0.10 and gain["outcome"] == "equivalent"
    assert wide["control"]["answers_from_priors"] is True
    table = report.gain_table(wide)
    assert "| equivalent: answers from priors |" in table and "±10.00 points" in table
    same = report.with_margin(run, 0.02)["control"]["tasks"]["active_passive"]["image_gain"]
    assert same == run.results["control"]["tasks"]["active_passive"]["image_gain"]


def test_a_gain_without_variation_prints_inconclusive_never_equivalent() -> None:
    """A random-weight model at n = 8: every datapoint tied with and without the image."""
    tied = [[0.5] * 4] * 8
    gain = robustness.image_gain(tied, tied, [[1, 1, 0, 0]] * 8, resamples=100)
    results = {
        "model": "m",
        "benchmark": "bla",
        "control": {"kind": "blank", "tasks": {"active_passive": {"image_gain": gain}}},
    }
    results["control"]["answers_from_priors"] = gain["from_priors"]
    table = report.gain_table(results)
    assert "inconclusive (no variation)" in table and "[0.00, 0.00]" not in table
    assert "answers from priors" not in table.split("Outcome:")[0]
    # an older run that stored "equivalent" from intervals of width 0 reads the same
    old = {k: v for k, v in gain.items() if k != "variation"}
    old.update(outcome="equivalent", from_priors=True)
    results["control"]["tasks"]["active_passive"]["image_gain"] = old
    results["control"]["answers_from_priors"] = True
    table = report.gain_table(results)
    assert "inconclusive (no variation)" in table and "on every task: answers" not in table


def test_undefined_cochran_q_and_tau_are_words() -> None:
    tied = [[0.5] * 4] * 8
    sweep = robustness.sweep_sensitivity(
        {"active_passive": ({"a": tied, "b": tied}, [[1, 1, 0, 0]] * 8)}, resamples=50
    )
    text = report.sensitivity_table({"model": "m", "benchmark": "bla", "sensitivity": sweep})
    assert "nan" not in text and "undefined (no datapoint's set accuracy differs" in text
    assert "(no variation)" in text


def test_the_margin_option_takes_points_above_0_and_below_100() -> None:
    assert report._margin("2.5") == 2.5
    for bad in ("0", "100", "x", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected points"):
            report._margin(bad)
