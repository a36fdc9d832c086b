"""The leads the leaderboard quotes: the simulated table and its lookup."""

from __future__ import annotations

import math

import pytest
from bla_eval.performance import coverage

from bla_metric import rank_power


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
