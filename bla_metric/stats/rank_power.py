"""How large a lead the leaderboard's rank sets find: the lead at which one run is alone at rank
1 (its simultaneous rank set [1, 1]) in 80% of simulated benchmarks.

:data:`RANK_ONE_LEAD` is measured by ``python -m bla_eval.simulations.coverage --tables power
--resamples 250`` (the permutation step-down of :func:`bla_metric.stats.ranks.permutation_rank_sets`
with 250 permutations, fewer than the leaderboard's 2,000, so its leads are if anything too
large; one run ahead of equal others, runs independent, 400 benchmarks per cell) as a
standardised lead lambda = lead x sqrt(n) / sd, sd the standard deviation of the per-datapoint
differences of two runs; :func:`rank_one_lead` turns it into a lead for a leaderboard's own n
and sd.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

POWER = 0.8
"""The share of benchmarks in which the lead is found."""
RANK_ONE_LEAD: dict[int, dict[int, float]] = {
    2: {30: 2.94, 100: 3.0, 600: 2.94},
    3: {30: 3.62, 100: 3.5, 600: 3.5},
    4: {30: 4.12, 100: 4.0, 600: 4.0},
    6: {30: 4.75, 100: 4.44, 600: 4.44},
    10: {30: 5.38, 100: 5.06, 600: 4.94},
}
"""{runs: {datapoints: lambda}} from the simulation (see the module's docstring): the output's
last line of ``--tables power --benchmarks 400 --resamples 250 --seed 0``."""


def tabled(runs: int, n: int) -> tuple[int, int] | None:
    """The (runs, datapoints) of :data:`RANK_ONE_LEAD` that stands for ``runs`` runs on ``n``
    datapoints: the fewest tabled runs at or above ``runs`` and the largest tabled size at or
    below ``n`` (more runs and fewer datapoints need a larger lead, so the entry taken is never
    the smaller one); None where the table has no such entry."""
    counts = [r for r in sorted(RANK_ONE_LEAD) if r >= runs]
    sizes = [m for m in sorted(RANK_ONE_LEAD[counts[0]]) if m <= n] if counts else []
    return (counts[0], sizes[-1]) if sizes else None


def lead_for(runs: int, n: int) -> float | None:
    """The standardised lead of the :func:`tabled` entry for ``runs`` runs on ``n``
    datapoints, or None."""
    entry = tabled(runs, n)
    return RANK_ONE_LEAD[entry[0]][entry[1]] if entry else None


def rank_one_lead(runs: int, n: int, sd: float) -> float | None:
    """The lead (in the metric's units) at which one of ``runs`` runs on ``n`` datapoints is
    alone at rank 1 in :data:`POWER` of benchmarks, for per-datapoint paired differences of
    standard deviation ``sd``: :func:`lead_for` x sd / sqrt(n). None where :func:`lead_for`
    is, or ``sd`` is not a positive number."""
    lam = lead_for(runs, n)
    if lam is None or not sd > 0 or math.isinf(sd):
        return None
    return lam * sd / math.sqrt(n)


def lead_for_runs(values: Any, share: bool) -> dict[str, float] | None:
    """The lead at which one of the runs at hand, ahead of each of the others by it, is alone
    at rank 1 in :data:`POWER` of benchmarks, from their own per-datapoint ``values`` (runs,
    n): :func:`lead_for` x sd_worst / sqrt(n), sd_worst the largest over ordered pairs (leader
    l, other k) of the sd of their per-datapoint differences with l raised by the lead, each
    run in turn the leader, so that the least correlated run leading is covered too. Outcomes
    that are shares (``share``: each value 0 or 1) carry the lead in their rate: the leader's
    variance is p(1 - p) at its rate p + lead, with the pair's observed correlation kept, and
    the lead is the fixed point of that equation. {"lead", "lambda", "sd", "runs", "n"}, or
    None where :func:`lead_for` is, or the differences do not vary."""
    x = np.asarray(values, float)
    runs, n = x.shape
    lam = lead_for(runs, n)
    if lam is None or n < 2:
        return None
    centred = x - x.mean(axis=1, keepdims=True)
    cov = centred @ centred.T / (n - 1)
    var = np.diag(cov).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(np.outer(var, var) > 0, cov / np.sqrt(np.outer(var, var)), 0.0)
    rates = x.mean(axis=1)
    lead, sd = 0.0, 0.0
    for _ in range(100 if share else 1):
        raised = np.clip(rates + lead, 0.0, 1.0)
        leader = raised * (1 - raised) if share else var
        pair = leader[:, None] + var[None, :] - 2 * corr * np.sqrt(leader[:, None] * var[None, :])
        np.fill_diagonal(pair, 0.0)
        sd = float(np.sqrt(max(pair.max(), 0.0)))
        new = lam * sd / math.sqrt(n)
        if abs(new - lead) < 1e-9:
            break
        lead = new
    if not sd > 0:
        return None
    return {"lead": lam * sd / math.sqrt(n), "lambda": lam, "sd": sd, "runs": runs, "n": n}
