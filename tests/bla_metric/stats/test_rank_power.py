"""The leads the leaderboard quotes: the simulated table and its lookup."""

from __future__ import annotations

import math

import pytest
from bla_eval.simulations import coverage

from bla_metric.stats import rank_power


def test_the_table_holds_the_simulations_grid_and_agrees_with_theory() -> None:
    """Every (runs, n) of the script is tabled; two runs need about the lead of a two-sided
    5% test with power 0.8, 1.96 + 0.84 = 2.80 (the step-down adds nothing with one pair; 250
    permutations and the bisection's step make it a little larger); more runs need more."""
    table = rank_power.RANK_ONE_LEAD
    assert set(table) == set(coverage.POWER_RUNS)
    assert all(set(row) == set(coverage.POWER_SIZES) for row in table.values())
    assert 2.7 <= table[2][600] <= 3.1
    assert table[10][600] > table[4][600] > table[2][600] + 0.5


def test_the_lookup_never_takes_the_smaller_lead() -> None:
    sd = 0.3
    assert rank_power.rank_one_lead(2, 600, sd) == pytest.approx(2.94 * sd / math.sqrt(600))
    assert rank_power.tabled(5, 613) == (6, 600)  # more runs, fewer datapoints
    assert rank_power.lead_for(5, 613) == rank_power.RANK_ONE_LEAD[6][600]
    assert rank_power.lead_for(3, 99) == rank_power.RANK_ONE_LEAD[3][30]
    assert rank_power.lead_for(11, 600) is None and rank_power.lead_for(2, 29) is None
    assert rank_power.rank_one_lead(2, 600, 0.0) is None
    assert rank_power.rank_one_lead(2, 600, float("nan")) is None


def test_the_lead_for_the_runs_at_hand_takes_the_worst_pair_and_a_shares_own_variance() -> None:
    """Two runs: the table's lambda x the sd of their differences / sqrt(n). A run that shares
    nothing with five correlated others needs more than the root mean square sd says; 0/1
    outcomes carry the lead in their rate, so the leader's variance grows with it."""
    import numpy as np

    rng = np.random.default_rng(0)
    two = rng.binomial(4, 0.7, (2, 600)) / 4
    sd = float(np.std(two[0] - two[1], ddof=1))
    assert rank_power.lead_for_runs(two, False)["lead"] == pytest.approx(
        rank_power.rank_one_lead(2, 600, sd), rel=1e-6
    )
    shared = rng.standard_normal(613)
    runs = np.stack([rng.standard_normal(613)] + [shared + 0.3 * rng.standard_normal(613)] * 5)
    pairs = [runs[j] - runs[k] for j in range(6) for k in range(j + 1, 6)]
    rms = float(np.sqrt(np.mean([np.var(d, ddof=1) for d in pairs])))
    assert rank_power.lead_for_runs(runs, False)["lead"] > 1.3 * rank_power.rank_one_lead(
        6, 613, rms
    )
    zeros_ones = (rng.random((6, 100)) < 1 / 6).astype(float)
    found = rank_power.lead_for_runs(zeros_ones, True)
    plain = rank_power.lead_for_runs(zeros_ones, False)
    assert found["lead"] > plain["lead"] and found["lambda"] == rank_power.lead_for(6, 100)
    assert rank_power.lead_for_runs(zeros_ones[:, :20], True) is None  # below the table


def test_the_printed_lead_holds_for_unequal_correlations_and_rare_0_1_outcomes() -> None:
    """A small seeded run of the script's check (``--tables power-check``): the lead computed
    from equal runs of each design puts a run that far ahead alone at rank 1 in most fresh
    benchmarks, where the lead from the root mean square sd does not."""
    import numpy as np

    rng = np.random.default_rng(1)
    for design in (1, 2):
        found = coverage.power_check(design, coverage.POWER_DESIGNS[design][1], 25, 150, rng)
        assert found["new"] >= 0.7 and found["old"] <= found["new"] - 0.2, (design, found)
