"""``python -m bla_eval.simulations.coverage`` with tiny settings: its tables."""

from __future__ import annotations

import re

import numpy as np
import pytest
from bla_eval.simulations import coverage


def test_the_simulation_prints_its_tables(monkeypatch, capsys) -> None:
    monkeypatch.setattr(coverage, "CALIBRATION_DRAWS", 2000)
    monkeypatch.setattr(coverage, "RANK_SCENARIOS", {"3 equal models": ([0.7] * 3, 60)})
    monkeypatch.setattr(coverage, "SMALL_RANK_SCENARIOS", (("2 equal models", [0.7] * 2, 30),))
    monkeypatch.setattr(coverage, "TEMPLATE_SCENARIOS", ((3, 40),))
    monkeypatch.setattr(coverage, "SHARE_SIZES", (30,))
    monkeypatch.setattr(coverage, "CALIBRATION_SIZES", (20,))
    monkeypatch.setattr(coverage, "GAINS", (0.0, 0.03))
    monkeypatch.setattr(coverage, "GAIN_N", 40)
    monkeypatch.setattr(coverage, "CLUSTER_SCENARIOS", (("2 equal models", (0.3, 0.3)),))
    monkeypatch.setattr(coverage, "POWER_RUNS", (2,))
    monkeypatch.setattr(coverage, "POWER_SIZES", (30,))
    assert coverage.main(["--benchmarks", "2", "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    share = r"\d+\.\d% ± \d+\.\d"  # each simulated share with its Monte Carlo error
    for method in coverage.RANK_METHODS:
        row = rf"^\| 3 equal models \(n = 60\) \| {method} \| {share} \| {share} \| \d+\.\d\d \|$"
        assert re.search(row, out, re.M), method
    assert "| 2 equal models (n = 30) | permutation, simultaneous |" in out
    assert re.search(rf"^\| 3 templates, n = 40( \| {share}){{3}} \|$", out, re.M)
    for gain in ("0", "3"):
        assert re.search(rf"^\| {gain} points( \| {share}){{5}} \|$", out, re.M)
    assert "| helps | hurts | equivalent | inconclusive | from priors (old rule) |" in out
    for design in ("BLA's design", "independent labels"):  # the calibration test
        row = rf"^\| {design}, n = \d+( \| {share}){{3}}( \| \d+\.\d\d%){{2}} \|$"
        assert re.search(row, out, re.M), design
    for method in coverage.CLUSTER_METHODS:
        row = rf"^\| 2 equal models \| {method} \| {share} \| {share} \| \d+\.\d\d \|$"
        assert re.search(row, out, re.M), method
    lead = r"\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)"
    assert re.search(rf"^\| 2 \| 30 \| {lead} \| \d+\.\d \| {share} \|$", out, re.M)
    assert re.search(r"^RANK_ONE_LEAD = \{2: \{30: \d+\.\d+\}\}$", out, re.M)
    exact = r"\d+\.\d%"
    for method in ("Clopper-Pearson \\(exact\\)", "Wilson", "percentile bootstrap"):
        assert re.search(rf"^\| n = 30 \| {method}( \| {exact}){{3}} \|$", out, re.M), method


def test_one_table_alone_gives_the_numbers_it_gives_in_the_report(monkeypatch, capsys) -> None:
    monkeypatch.setattr(coverage, "TEMPLATE_SCENARIOS", ((3, 30),))
    alone = coverage.report(3, 20, 5, ["templates"])
    both = coverage.report(3, 20, 5, ["templates", "shares"])
    assert alone.split("\n\n")[1].strip() == both.split("\n\n")[1].strip()
    assert "Clopper-Pearson" not in alone and "Clopper-Pearson" in both


def test_clopper_pearson_keeps_95_percent_where_wilson_does_not() -> None:
    """Exact coverage (no simulation) of the share intervals at n = 30: the claim of the docs."""
    found = coverage.share_coverage(30)
    assert found["Clopper-Pearson (exact)"]["minimum"] >= 0.95
    assert found["Wilson"]["minimum"] < 0.90 and found["percentile bootstrap"]["rare"] < 0.5


def test_true_ranks_and_percentile_intervals() -> None:
    assert coverage.true_ranks([0.5, 0.7, 0.7, 0.6]).tolist() == [4, 1, 1, 3]
    draws = np.array([[0.1, 0.2, 0.3], [0.3, 0.1, 0.2]])
    assert coverage.percentile_sets(draws).tolist() == [[1, 2], [1, 2]]


def test_the_power_table_is_the_same_in_two_processes(monkeypatch) -> None:
    """Each (runs, n) draws from its own stream: --workers changes the time, not the numbers."""
    monkeypatch.setattr(coverage, "POWER_RUNS", (2, 3))
    monkeypatch.setattr(coverage, "POWER_SIZES", (30,))
    one = coverage.power_table(4, 20, (0, 7), workers=1)
    assert coverage.power_table(4, 20, (0, 7), workers=2) == one


def test_a_lead_far_beyond_the_noise_is_found_and_none_is_not() -> None:
    rng = np.random.default_rng(0)
    values = rng.binomial(4, 0.7, (3, 100)) / 4
    scale = np.sqrt(2 * 0.7 * 0.3 / 4) / np.sqrt(100)
    assert coverage.alone_first(values, 8 * scale, 100, 0)
    assert not coverage.alone_first(values, 0.0, 100, 0)
    found = coverage.smallest_lead(values, scale, 100, 0)
    assert 0 < found < coverage.LEAD_RANGE[1]
    assert coverage.alone_first(values, found * scale, 100, 0)


def test_a_bad_option_is_one_line_naming_it(capsys) -> None:
    for argv, named in ((["--tables", "nope"], "'nope'"), (["--resamples", "3"], "--resamples")):
        with pytest.raises(SystemExit) as stop:
            coverage.main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and named in err, err
