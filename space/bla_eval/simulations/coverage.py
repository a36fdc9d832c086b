"""How well the leaderboard's and the robustness report's statistics hold, by simulation.

Run ``python -m bla_eval.simulations.coverage [--benchmarks 400] [--resamples 1000] [--seed 0]
[--tables ranks,small-ranks,clusters,power,power-check,templates,gain,shares,calibration]
[--workers 1]``
(a few minutes on two cores; ``power`` most of an hour at ``--resamples 250``, the setting of
:data:`bla_metric.stats.rank_power.RANK_ONE_LEAD`; ``--workers`` spreads it over processes with the
same numbers). Markdown tables, each from its own stream of the seed, every simulated share
with its Monte Carlo standard error:

- ``ranks``: for equal models, near ties and separated models at n = 600 (per-datapoint
  sentence accuracy drawn as Binomial(4, p) / 4, models independent), the share of simulated
  benchmarks in which every model's true rank lies in its 95% set (simultaneous coverage) and
  the share of (benchmark, model) in which it does (marginal coverage), for the simultaneous
  and marginal sets of :func:`bla_metric.stats.ranks.rank_sets` and for the percentile intervals of
  bootstrap ranks they replace; with the mean width of a set;
- ``small-ranks``: the same for 5 and 10 equal models at n = 30 and 100;
- ``clusters``: the same for 4 equal models on the active-passive task's 613 datapoints in its
  43 predicates of their real sizes (:data:`AP_PREDICATE_SIZES`), each model's success
  depending on the predicate (intra-cluster correlation 0.1 or 0.3 for all, 0.1 for two models
  and 0.3 for the others, or 0.5 for two and 0 for the others), for the rank sets of ``compare
  --cluster predicate`` (sign flips of whole predicates, :mod:`bla_metric.stats.cluster_ranks`),
  permutations of the models within predicates (what it used before), MRSW's bootstrap of
  whole predicates and permutations within datapoints (the clusters ignored);
- ``power``: how large a lead the leaderboard finds: for 2 to 10 runs at n = 30, 100 and 600
  (one run ahead, the others equal; per-datapoint sentence accuracy Binomial(4, 0.7) / 4 plus
  the lead, runs independent), the standardised lead lambda = lead x sqrt(n) / sd (sd of the
  per-datapoint differences of two runs) at which the leader's simultaneous permutation rank set
  is [1, 1] in 80% of simulated benchmarks (per benchmark the smallest such lead, by bisection;
  their 80th percentile, with the order statistics' 95% interval), and the share of fresh
  benchmarks in which a run that far ahead is alone at rank 1 (the check). The leaderboard
  quotes these numbers from :data:`bla_metric.stats.rank_power.RANK_ONE_LEAD`;
- ``templates``: with templates of equal true accuracy (n = 30, 100, 600), how often Cochran's
  Q says they differ and how often the set of templates that may be the best leaves one out
  (false alarms; nominal 5%);
- ``gain``: the share of runs whose outcome is each of helps / equivalent (answers from priors)
  / inconclusive / hurts, at a true gain of 0, 3 and 10 points, with the share the old rule (the
  gain's 95% interval contains 0) called "from priors";
- ``shares``: the exact coverage (a sum over binomial outcomes, no simulation) of the 95%
  intervals of a share of datapoints (set accuracy, set error) at n = 30, 100 and 600, for true
  rates from 0.5% to 50%: Clopper-Pearson (:func:`bla_metric.formulas.share_interval`, the one
  every table gives), Wilson's, and the percentile bootstrap;
- ``calibration``: how often the test of calibration of
  :func:`bla_metric.stats.calibration.calibration_summary` says "miscalibrated" for a calibrated
  model (its size; nominal 5%) and for one 40% too sure (logits 1.4 times the calibrated ones: its
  power), on BLA's design (two true and two false sentences per datapoint, one pair at P(yes) = pi
  and the other at 1 - pi) and on independent labels, at n = 100 and 600; beside them the size of
  the test that redraws each sentence's label on its own, and the calibrated model's mean ECE and
  mean floor;
- ``power-check``: the power line of the leaderboard for the runs at hand
  (:func:`bla_metric.stats.rank_power.lead_for_runs`): per simulated benchmark of equal runs the
  lead it prints, and whether a run that far ahead is alone at rank 1 in a fresh benchmark of the
  same design, for six independent runs, six runs whose correlations differ (the leader least
  correlated, 613 datapoints) and six runs of 0/1 outcomes at set accuracy's chance rate 1/6 (n =
  100); beside it the same for the lead from the root mean square sd over pairs.

Templates and image gains go through :mod:`bla_metric.stats.robustness` itself; the rank sets
through :func:`bla_metric.stats.ranks.rank_sets` on a vectorised bootstrap of the same datapoints
for all models (the metric is a mean over datapoints, so this equals
:func:`bla_metric.formulas.resampled`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bla_metric import formulas
from bla_metric.stats import calibration, ranks, robustness

from ..cli_common import OneLineParser, add_field_options, field_values
from ..tables import Table, markdown

LABELS = (1, 1, 0, 0)
RANK_SCENARIOS: dict[str, tuple[list[float], int]] = {
    "10 equal models": ([0.70] * 10, 600),
    "10 models 0.2 points apart": ([0.70 + 0.002 * k for k in range(10)], 600),
    "6 models, two ties": ([0.60, 0.60, 0.61, 0.61, 0.62, 0.64], 600),
    "4 models 5 points apart": ([0.55, 0.60, 0.65, 0.70], 600),
}
"""Name: (true sentence accuracy of each model, datapoints)."""
SMALL_RANK_SCENARIOS: tuple[tuple[str, list[float], int], ...] = (
    ("5 equal models", [0.70] * 5, 30),
    ("10 equal models", [0.70] * 10, 30),
    ("5 equal models", [0.70] * 5, 100),
    ("10 equal models", [0.70] * 10, 100),
)
"""(name, true sentence accuracy of each model, datapoints): equal models at the sizes of a
``--limit`` run or a slice (30 and 100 datapoints)."""
AP_PREDICATE_SIZES = (
    (247, 73, 59, 51, 24, 20, 16, 14, 13, 11, 10, 8, 7, 6)
    + (4,) * 4
    + (3,) * 4
    + (2,) * 5
    + (1,) * 16
)
"""Datapoints per predicate of BLA's active-passive task (613 in 43 predicates), counted from the
release's ``annotations/active_passive_captions.json``."""
CLUSTER_SCENARIOS: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("4 equal runs, icc 0.1", (0.1,) * 4),
    ("4 equal runs, icc 0.3", (0.3,) * 4),
    ("4 equal runs, icc 0.1, 0.1, 0.3, 0.3", (0.1, 0.1, 0.3, 0.3)),
    ("4 equal runs, icc 0.5, 0.5, 0, 0", (0.5, 0.5, 0.0, 0.0)),
)
"""(name, each run's intra-cluster correlation) of the clustered scenarios: true sentence
accuracy 0.70 for all; in the last two the runs depend on the predicates unequally (two of them
not at all in the last), so they are not exchangeable within a predicate."""
CLUSTER_METHODS = (
    "cluster sign flip, simultaneous",
    "cluster sign flip, marginal",
    "cluster permutation, simultaneous",
    "cluster bootstrap, simultaneous",
    "datapoint permutation, simultaneous",
)
"""The rank sets the clustered scenarios compare (the first two are ``--cluster``'s)."""
POWER_RUNS = (2, 3, 4, 6, 10)
"""Runs on a leaderboard in the power scenarios."""
POWER_SIZES = (30, 100, 600)
"""Datapoints per task in the power scenarios."""
LEAD_RANGE = (0.0, 8.0)
"""The standardised leads the bisection searches (a larger one counts as not found)."""
LEAD_STEPS = 7
"""Bisection steps (a resolution of 8 / 2^7 = 0.0625)."""
TEMPLATE_SCENARIOS = ((7, 30), (7, 100), (7, 600))
"""(templates of equal true accuracy, datapoints)."""
GAINS = (0.0, 0.03, 0.10)
"""True image gains in sentence accuracy (0, 3 and 10 points)."""
GAIN_N = 100
"""Datapoints of the image-gain scenario."""
NOISE = 0.8
"""Standard deviation of a condition's own noise beside the sentence prior both share (sd 1)."""
CALIBRATION_DRAWS = 100_000
"""Simulated datapoints that find the signal of a true sentence accuracy."""


def true_ranks(accuracy: Sequence[float]) -> np.ndarray:
    """1 + the number of models strictly better (ties share the better rank)."""
    truth = np.asarray(accuracy)
    return 1 + (truth[None, :] > truth[:, None]).sum(axis=1)


def percentile_sets(draws: np.ndarray) -> np.ndarray:
    """The intervals the rank sets replace: 2.5 / 97.5 percentiles of each model's bootstrap
    ranks (1 + the number of models strictly better on the resample)."""
    resampled = 1 + (draws[None, :, :] > draws[:, None, :]).sum(axis=1)
    return np.quantile(resampled, [0.025, 0.975], axis=1, method="inverted_cdf").T.astype(int)


RANK_METHODS = (
    "permutation, simultaneous",
    "permutation, marginal",
    "bootstrap, simultaneous",
    "bootstrap, marginal",
    "percentile",
)
"""The rank sets the simulation compares (the first two are the leaderboard's)."""


def rank_coverage(
    accuracy: Sequence[float], n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, dict[str, float]]:
    """{method: {"simultaneous", "marginal", "width"}} over ``benchmarks`` simulated ones: the
    rank sets of :func:`bla_metric.stats.ranks.permutation_rank_sets` (the leaderboard's) and of
    :func:`bla_metric.stats.ranks.rank_sets` (MRSW's bootstrap), simultaneous and marginal, and the
    percentile intervals of bootstrap ranks."""
    truth = true_ranks(accuracy)
    methods = RANK_METHODS
    together = dict.fromkeys(methods, 0)
    each = dict.fromkeys(methods, 0)
    width = dict.fromkeys(methods, 0.0)
    for _ in range(benchmarks):
        values = rng.binomial(4, np.asarray(accuracy)[:, None], (len(accuracy), n)) / 4
        picks = rng.integers(0, n, (resamples, n))
        draws = values[:, picks].mean(axis=2)  # (models, resamples)
        observed = values.mean(axis=1)
        seed = int(rng.integers(2**31))
        found = {
            "permutation, simultaneous": ranks.permutation_rank_sets(values, resamples, seed),
            "permutation, marginal": ranks.permutation_rank_sets(
                values, resamples, seed, kind="marginal"
            ),
            "bootstrap, simultaneous": ranks.rank_sets(observed, draws),
            "bootstrap, marginal": ranks.rank_sets(observed, draws, kind="marginal"),
            "percentile": percentile_sets(draws),
        }
        for method, sets in found.items():
            inside = (sets[:, 0] <= truth) & (truth <= sets[:, 1])
            together[method] += bool(inside.all())
            each[method] += int(inside.sum())
            width[method] += float((sets[:, 1] - sets[:, 0] + 1).mean())
    return {
        m: {
            "simultaneous": together[m] / benchmarks,
            "marginal": each[m] / (benchmarks * len(accuracy)),
            "width": width[m] / benchmarks,
        }
        for m in methods
    }


def clustered_values(
    iccs: Sequence[float], accuracy: float, sizes: Sequence[int], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(per-datapoint sentence accuracy (models, n), each datapoint's cluster (n,)): each of a
    datapoint's four sentences is right when ``sqrt(icc) u + sqrt(1 - icc) e`` lies below the
    normal quantile of ``accuracy``, with u ~ N(0, 1) drawn per model and cluster (how much the
    cluster suits that model) and e ~ N(0, 1) per sentence: every model has the true accuracy,
    and two sentences of one model in one cluster correlate by ``icc`` on that latent scale."""
    from statistics import NormalDist

    cluster = np.repeat(np.arange(len(sizes)), sizes)
    threshold = NormalDist().inv_cdf(accuracy)
    icc = np.asarray(iccs, float)[:, None, None]
    effect = rng.standard_normal((len(iccs), len(sizes)))[:, cluster, None]
    latent = np.sqrt(icc) * effect + np.sqrt(1 - icc) * rng.standard_normal(
        (len(iccs), len(cluster), 4)
    )
    return (latent < threshold).mean(axis=2), cluster


def cluster_coverage(
    iccs: Sequence[float], benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, dict[str, float]]:
    """{method: {"simultaneous", "marginal", "width"}} of :data:`CLUSTER_METHODS` for equal
    models (true rank 1 each) on :data:`AP_PREDICATE_SIZES`' clusters."""
    from bla_metric.stats import cluster_ranks

    count = len(iccs)
    sizes = np.asarray(AP_PREDICATE_SIZES, float)
    together = dict.fromkeys(CLUSTER_METHODS, 0)
    each = dict.fromkeys(CLUSTER_METHODS, 0)
    width = dict.fromkeys(CLUSTER_METHODS, 0.0)
    for _ in range(benchmarks):
        values, cluster = clustered_values(iccs, 0.70, AP_PREDICATE_SIZES, rng)
        seed = int(rng.integers(2**31))
        t_obs, null = cluster_ranks.cluster_sign_flip_statistics(values, cluster, resamples, seed)
        t_perm, null_perm = cluster_ranks.cluster_permutation_statistics(
            values, cluster, resamples, seed
        )
        sums = np.zeros((len(sizes), count))
        np.add.at(sums, cluster, values.T)
        weights = rng.multinomial(len(sizes), np.full(len(sizes), 1 / len(sizes)), resamples)
        draws = (weights @ sums / (weights @ sizes)[:, None]).T  # (models, resamples)
        found = {
            CLUSTER_METHODS[0]: ranks._sets(t_obs, null, ranks.ALPHA, "simultaneous"),
            CLUSTER_METHODS[1]: ranks._sets(t_obs, null, ranks.ALPHA, "marginal"),
            CLUSTER_METHODS[2]: ranks._sets(t_perm, null_perm, ranks.ALPHA, "simultaneous"),
            CLUSTER_METHODS[3]: ranks.rank_sets(values.mean(axis=1), draws),
            CLUSTER_METHODS[4]: ranks.permutation_rank_sets(values, resamples, seed),
        }
        for method, sets in found.items():
            inside = sets[:, 0] <= 1
            together[method] += bool(inside.all())
            each[method] += int(inside.sum())
            width[method] += float((sets[:, 1] - sets[:, 0] + 1).mean())
    return {
        m: {
            "simultaneous": together[m] / benchmarks,
            "marginal": each[m] / (benchmarks * count),
            "width": width[m] / benchmarks,
        }
        for m in CLUSTER_METHODS
    }


def cluster_table(benchmarks: int, resamples: int, rng: np.random.Generator) -> list[str]:
    """The coverage of the rank sets by cluster as Markdown lines."""
    rows = []
    for name, iccs in CLUSTER_SCENARIOS:
        for method, row in cluster_coverage(iccs, benchmarks, resamples, rng).items():
            rows.append(
                [name, method, _pm(row["simultaneous"], benchmarks)]
                + [_pm(row["marginal"], benchmarks * len(iccs)), f"{row['width']:.2f}"]
            )
    columns = ("scenario (AP: 613 datapoints in 43 predicates)", *COVERAGE_COLUMNS[1:])
    return [markdown(Table("", columns, rows))]


def alone_first(values: np.ndarray, lead: float, resamples: int, seed: int) -> bool:
    """Whether run 0, ``lead`` added to each of its per-datapoint values, is alone at rank 1:
    its simultaneous rank set of :func:`bla_metric.stats.ranks.permutation_rank_sets` is [1, 1]."""
    shifted = values.copy()
    shifted[0] += lead
    return ranks.permutation_rank_sets(shifted, resamples, seed)[0].tolist() == [1, 1]


def smallest_lead(values: np.ndarray, scale: float, resamples: int, seed: int) -> float:
    """The smallest standardised lead (in units of ``scale`` = sd / sqrt(n)) at which run 0 of
    ``values`` is alone at rank 1, by bisection over :data:`LEAD_RANGE` (inf beyond it)."""
    low, high = LEAD_RANGE
    if not alone_first(values, high * scale, resamples, seed):
        return float("inf")
    for _ in range(LEAD_STEPS):
        middle = (low + high) / 2
        if alone_first(values, middle * scale, resamples, seed):
            high = middle
        else:
            low = middle
    return high


def rank_one_lead(
    runs: int, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """{"lead", "low", "high", "check"}: the standardised lead at which one run ahead of
    ``runs`` - 1 equal ones is alone at rank 1 in :data:`bla_metric.stats.rank_power.POWER` of
    ``benchmarks`` simulated ones (with the order statistics' 95% interval of that
    percentile), and the share of as many fresh benchmarks in which a run that far ahead is."""
    from bla_metric.stats import rank_power

    sd = np.sqrt(2 * 0.7 * 0.3 / 4)  # per-datapoint differences of two independent runs
    scale = sd / np.sqrt(n)
    found = []
    for _ in range(benchmarks):
        values = rng.binomial(4, 0.7, (runs, n)) / 4
        found.append(smallest_lead(values, scale, resamples, int(rng.integers(2**31))))
    leads = np.sort(found)
    power = rank_power.POWER
    middle = power * benchmarks
    spread = 1.96 * np.sqrt(benchmarks * power * (1 - power))
    index = int(np.ceil(middle)) - 1
    lead = float(leads[index])
    low = float(leads[max(0, int(np.floor(middle - spread)) - 1)])
    high = float(leads[min(benchmarks - 1, int(np.ceil(middle + spread)) - 1)])
    hits = 0
    for _ in range(benchmarks):
        values = rng.binomial(4, 0.7, (runs, n)) / 4
        hits += alone_first(values, lead * scale, resamples, int(rng.integers(2**31)))
    return {"lead": lead, "low": low, "high": high, "check": hits / benchmarks, "sd": float(sd)}


def _power_cell(cell: tuple[int, int, int, int, Sequence[int]]) -> dict[str, float]:
    """:func:`rank_one_lead` of one (runs, n) from its own stream of the seed (a worker's task)."""
    runs, n, benchmarks, resamples, entropy = cell
    return rank_one_lead(runs, n, benchmarks, resamples, np.random.default_rng([*entropy, runs, n]))


def power_table(
    benchmarks: int, resamples: int, entropy: Sequence[int], workers: int = 1
) -> list[str]:
    """The leads the leaderboard finds as Markdown lines, and the Python literal of
    :data:`bla_metric.stats.rank_power.RANK_ONE_LEAD`. Each (runs, n) draws from its own stream
    (``entropy`` + (runs, n)), so ``workers`` processes give the same numbers as one."""
    from concurrent.futures import ProcessPoolExecutor

    cells = [(r, n, benchmarks, resamples, tuple(entropy)) for r in POWER_RUNS for n in POWER_SIZES]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            found = list(pool.map(_power_cell, cells))
    else:
        found = [_power_cell(cell) for cell in cells]
    rows = []
    table: dict[int, dict[int, float]] = {}
    for (runs, n, *_), row in zip(cells, found, strict=True):
        table.setdefault(runs, {})[n] = round(row["lead"], 2)
        points = 100 * row["lead"] * row["sd"] / np.sqrt(n)
        lead = f"{row['lead']:.2f} ({row['low']:.2f}-{row['high']:.2f})"
        rows.append([str(runs), str(n), lead, f"{points:.1f}", _pm(row["check"], benchmarks)])
    columns = (
        "runs", "n", "standardised lead alone at rank 1 in 80% (95% MC interval)",
        "that lead in points (sd 32.4)", "fresh benchmarks alone at rank 1 at that lead",
    )  # fmt: skip
    return [markdown(Table("", columns, rows)), "", f"RANK_ONE_LEAD = {table!r}"]


POWER_DESIGNS = (
    ("6 independent runs, Binomial(4, 0.7) / 4", 600),
    ("6 runs whose correlations differ, the leader least correlated", 613),
    ("6 runs of 0/1 outcomes at set accuracy's chance rate 1/6", 100),
)
"""(design, datapoints) of the check of the power line for the runs at hand."""
CORRELATIONS = (0.0, 0.8, 0.8, 0.6, 0.6, 0.4)
"""The shared part of each run's latent (the leader first) in the second design: two runs
correlate by sqrt(r_j r_k) on the latent scale, the leader with none."""


def design_values(design: int, n: int, lead: float, rng: np.random.Generator) -> np.ndarray:
    """Per-datapoint values (6, n) of :data:`POWER_DESIGNS`' design number ``design`` with run
    0 ahead by ``lead``: added to each of its values (the first two), or to its rate (0/1)."""
    from statistics import NormalDist

    if design == 0:
        values = rng.binomial(4, 0.7, (6, n)) / 4
    elif design == 1:
        shared = np.sqrt(np.asarray(CORRELATIONS))[:, None, None] * rng.standard_normal((1, n, 1))
        noise = np.sqrt(1 - np.asarray(CORRELATIONS))[:, None, None] * rng.standard_normal(
            (6, n, 4)
        )
        values = (shared + noise < NormalDist().inv_cdf(0.7)).mean(axis=2)
    else:
        rates = np.array([1 / 6 + lead] + [1 / 6] * 5)[:, None]
        return (rng.random((6, n)) < rates).astype(float)
    values[0] += lead
    return values


def power_check(
    design: int, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """{"new", "old", "lead"}: over ``benchmarks``, the lead
    :func:`bla_metric.stats.rank_power.lead_for_runs` computes from a benchmark of equal runs of the
    design, and the share of fresh benchmarks in which a run that far ahead is alone at rank 1
    (``new``); ``old`` the same for the lead from the root mean square sd over pairs."""
    from bla_metric.stats import rank_power

    share = design == 2
    hits = {"new": 0, "old": 0}
    total = 0.0
    for _ in range(benchmarks):
        equal = design_values(design, n, 0.0, rng)
        found = rank_power.lead_for_runs(equal, share)
        pairs = [equal[j] - equal[k] for j in range(6) for k in range(j + 1, 6)]
        rms = float(np.sqrt(np.mean([np.var(d, ddof=1) for d in pairs])))
        leads = {"new": found["lead"], "old": rank_power.rank_one_lead(6, n, rms)}
        seed = int(rng.integers(2**31))
        state = rng.bit_generator.state
        for name, lead in leads.items():
            rng.bit_generator.state = state  # the same fresh benchmark at both leads
            fresh = design_values(design, n, lead, rng)
            hits[name] += ranks.permutation_rank_sets(fresh, resamples, seed)[0].tolist() == [1, 1]
        total += found["lead"]
    return {**{k: v / benchmarks for k, v in hits.items()}, "lead": total / benchmarks}


def power_check_table(benchmarks: int, resamples: int, rng: np.random.Generator) -> list[str]:
    """The power line's check on the runs at hand as Markdown lines."""
    rows = []
    for design, (name, n) in enumerate(POWER_DESIGNS):
        row = power_check(design, n, benchmarks, resamples, rng)
        rows.append(
            [f"{name} (n = {n})", f"{100 * row['lead']:.1f}", _pm(row["new"], benchmarks)]
            + [_pm(row["old"], benchmarks)]
        )
    columns = (
        "design (n)", "mean lead printed (points)", "fresh benchmarks alone at rank 1 at it",
        "with the lead from the root mean square sd",
    )  # fmt: skip
    return [markdown(Table("", columns, rows))]


def sentence_scores(signal: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Scores (n, 4): the true sentences raised by ``signal`` (n,) above ``noise`` (n, 4)."""
    return noise + signal[:, None] * np.asarray(LABELS, float)


def template_false_alarms(
    templates: int, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """With ``templates`` of equal true accuracy: the share of benchmarks in which Cochran's Q
    rejects and in which the set that may be best leaves a template out (``best_set``: the
    permutation step-down's, the one reported; ``bootstrap``: MRSW's bootstrap critical value
    on the same draws)."""
    omnibus = excluded = by_bootstrap = 0
    labels = [list(LABELS)] * n
    for sim in range(benchmarks):
        difficulty = rng.normal(1.0, 0.7, n)  # shared by the templates: paired outcomes
        scores = {
            f"t{k}": sentence_scores(difficulty, rng.normal(size=(n, 4))).tolist()
            for k in range(templates)
        }
        result, draws = robustness._sensitivity(
            scores, labels, "sentence_accuracy", "ranking", None, resamples, sim
        )
        omnibus += bool(result["omnibus"]["templates_matter"])
        excluded += len(result["may_be_best"]) < templates
        observed = np.array([entry["value"] for entry in result["templates"].values()])
        by_bootstrap += len(ranks.best_set(ranks.rank_sets(observed, draws))) < templates
    return {
        "cochran_q": omnibus / benchmarks,
        "best_set": excluded / benchmarks,
        "bootstrap": by_bootstrap / benchmarks,
    }


def signal_for(accuracy: float, rng: np.random.Generator) -> float:
    """The mean signal of :func:`sentence_scores` giving sentence ``accuracy`` (bisection on a
    large simulated sample; the same noise for every step)."""
    noise = rng.normal(size=(CALIBRATION_DRAWS, 4)) * np.sqrt(1 + NOISE**2)
    spread = rng.normal(0.0, 0.7, CALIBRATION_DRAWS)
    low, high = -3.0, 6.0
    for _ in range(40):
        middle = (low + high) / 2
        if _accuracy(sentence_scores(middle + spread, noise)) < accuracy:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _accuracy(scores: np.ndarray) -> float:
    """Sentence accuracy of the ranking view for labels (1, 1, 0, 0): the two top-scored
    sentences are taken as true, so each true sentence among them makes two sentences right."""
    top = np.argsort(-scores, axis=1)[:, :2]
    return float((top < 2).sum() * 2 / scores.size)


def gain_outcomes(
    gain: float, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """Shares of :func:`bla_metric.stats.robustness.image_gain`'s outcomes (and of the old
    rule) at a true gain of ``gain`` over a control of sentence accuracy 0.60."""
    control_signal = signal_for(0.60, rng)
    real_signal = signal_for(0.60 + gain, rng)
    counts = dict.fromkeys((*robustness.GAIN_OUTCOMES, "old rule"), 0)
    labels = [list(LABELS)] * n
    for sim in range(benchmarks):
        spread = rng.normal(0.0, 0.7, n)
        prior = rng.normal(size=(n, 4))  # what the sentences alone suggest, in both conditions
        real = sentence_scores(real_signal + spread, prior + rng.normal(size=(n, 4)) * NOISE)
        control = sentence_scores(control_signal + spread, prior + rng.normal(size=(n, 4)) * NOISE)
        result = robustness.image_gain(
            real.tolist(), control.tolist(), labels, resamples=resamples, seed=sim
        )
        counts[result["outcome"]] += 1
        low, high = result["ci"]
        counts["old rule"] += low <= 0.0 <= high
    return {key: value / benchmarks for key, value in counts.items()}


SHARE_SIZES = (30, 100, 600)
"""Datapoints of the share-interval scenarios (a ``--limit`` run, a slice, a BLA task)."""
SHARE_RATES = np.round(np.arange(0.005, 0.5001, 0.005), 3)
"""True rates of a share of datapoints (set accuracy or set error: rare ones included; the
coverage of every method is symmetric about 0.5)."""


def _binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k), k = 0..n, for X ~ Binomial(n, p), 0 < p < 1."""
    from math import lgamma

    k = np.arange(n + 1)
    log_choose = lgamma(n + 1) - np.array([lgamma(j + 1) + lgamma(n - j + 1) for j in k])
    return np.exp(log_choose + k * np.log(p) + (n - k) * np.log1p(-p))


def percentile_share(k: int, n: int) -> list[float]:
    """The percentile bootstrap interval of a share k / n with infinitely many resamples: the
    2.5 / 97.5 percentiles of Binomial(n, k / n) / n (what ``results.json`` gave before)."""
    if k in (0, n):
        return [k / n, k / n]
    cdf = np.cumsum(_binomial_pmf(n, k / n))
    low = int(np.searchsorted(cdf, 0.025))
    high = int(np.searchsorted(cdf, 0.975))
    return [low / n, high / n]


SHARE_METHODS = {
    "Clopper-Pearson (exact)": formulas.share_interval,
    "Wilson": formulas.wilson_interval,
    "percentile bootstrap": percentile_share,
}
"""The intervals of a share of datapoints compared (the first is the one every table gives)."""


def share_coverage(n: int) -> dict[str, dict[str, float]]:
    """{method: {"minimum", "mean", "rare"}}: the exact coverage (a sum over the binomial
    outcomes, no simulation error) of each 95% interval of :data:`SHARE_METHODS` for a share
    of ``n`` datapoints, minimum and mean over the true rates :data:`SHARE_RATES`, and the
    minimum over the rare ones (at most 5%)."""
    out = {}
    for name, method in SHARE_METHODS.items():
        intervals = np.array([method(k, n) for k in range(n + 1)])
        covered = []
        for p in SHARE_RATES:
            inside = (intervals[:, 0] <= p) & (p <= intervals[:, 1])
            covered.append(float(_binomial_pmf(n, float(p))[inside].sum()))
        covered_array = np.array(covered)
        out[name] = {
            "minimum": float(covered_array.min()),
            "mean": float(covered_array.mean()),
            "rare": float(covered_array[SHARE_RATES <= 0.05].min()),
        }
    return out


def share_table() -> list[str]:
    """The exact coverage of the share intervals as Markdown lines."""
    rows = []
    for n in SHARE_SIZES:
        for name, row in share_coverage(n).items():
            rows.append([f"n = {n}", name, *(_pct(row[k]) for k in ("minimum", "rare", "mean"))])
    columns = (
        "share of datapoints (true rate 0.5% to 50%)", "interval", "minimum coverage",
        "minimum at rates <= 5%", "mean coverage",
    )  # fmt: skip
    return [markdown(Table("", columns, rows))]


COVERAGE_COLUMNS = ("scenario", "sets", "all ranks covered", "each rank covered", "mean width")
"""The columns of the rank sets' coverage tables."""


def rank_table(
    scenarios: Sequence[tuple[str, list[float], int]],
    benchmarks: int,
    resamples: int,
    rng: np.random.Generator,
) -> list[str]:
    """The coverage of the rank sets in ``scenarios`` as Markdown lines (± the Monte Carlo
    standard error of each share)."""
    rows = []
    for name, accuracy, n in scenarios:
        found = rank_coverage(accuracy, n, benchmarks, resamples, rng)
        for method, row in found.items():
            rows.append(
                [f"{name} (n = {n})", method, _pm(row["simultaneous"], benchmarks)]
                + [_pm(row["marginal"], benchmarks * len(accuracy)), f"{row['width']:.2f}"]
            )
    return [markdown(Table("", COVERAGE_COLUMNS, rows))]


def template_table(benchmarks: int, resamples: int, rng: np.random.Generator) -> list[str]:
    """False alarms of the template statements as Markdown lines."""
    rows = []
    for templates, n in TEMPLATE_SCENARIOS:
        alarms = template_false_alarms(templates, n, benchmarks, resamples, rng)
        shares = [_pm(alarms[k], benchmarks) for k in ("cochran_q", "best_set", "bootstrap")]
        rows.append([f"{templates} templates, n = {n}", *shares])
    columns = (
        "equal templates", "Cochran's Q says they differ", "best set leaves one out",
        "(bootstrap's best set)",
    )  # fmt: skip
    return [markdown(Table("", columns, rows))]


def gain_table(benchmarks: int, resamples: int, rng: np.random.Generator) -> list[str]:
    """Outcomes of the image-gain test as Markdown lines."""
    outcomes = (*robustness.GAIN_OUTCOMES, "old rule")
    rows = []
    for gain in GAINS:
        shares = gain_outcomes(gain, GAIN_N, benchmarks, resamples, rng)
        rows.append([f"{100 * gain:g} points", *(_pm(shares[o], benchmarks) for o in outcomes)])
    first = f"true image gain (n = {GAIN_N}, margin {100 * robustness.EQUIVALENCE_MARGIN:g} points)"
    named = ("from priors (old rule)" if o == "old rule" else o for o in outcomes)
    return [markdown(Table("", (first, *named), rows))]


CALIBRATION_SIZES = (100, 600)
"""Datapoints (four sentences each) of the calibration scenarios."""
CALIBRATION_DESIGNS = ("BLA's design", "independent labels")
"""How the simulated labels depend on each other (see :func:`calibrated_run`)."""
TOO_SURE = 1.4
"""The miscalibrated model's logits are this many times the calibrated ones (40% too sure)."""


def calibrated_run(design: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(calibrated P(yes) (n, 4), labels (n, 4)) of a simulated run. BLA's design: per datapoint
    one pair of sentences at P(yes) = pi and the other at 1 - pi (pi ~ Beta(2, 2)), the first
    pair the true one with probability pi, else the second: two true and two false, every
    sentence true with its P(yes). Independent labels: each P(yes) ~ Beta(2, 2), each sentence
    true with it on its own."""
    if design == CALIBRATION_DESIGNS[1]:
        p = rng.beta(2.0, 2.0, (n, 4))
        return p, (rng.random((n, 4)) < p).astype(int)
    pi = rng.beta(2.0, 2.0, n)
    p = np.stack([pi, pi, 1 - pi, 1 - pi], axis=1)
    first = rng.random(n) < pi
    y = np.stack([first, first, ~first, ~first], axis=1).astype(int)
    return p, y


def too_sure(p: np.ndarray) -> np.ndarray:
    """P(yes) with :data:`TOO_SURE` times the logits of ``p``."""
    q = np.clip(p, 1e-9, 1 - 1e-9)
    return 1 / (1 + np.exp(-TOO_SURE * np.log(q / (1 - q))))


def independent_null_p(p: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> float:
    """The p-value of the test that redraws every sentence's label on its own with its P(yes)
    (Broecker & Smith; what ``analyze`` gave before), for comparison."""
    flat_p, flat_y = p.ravel(), y.ravel()
    index = np.minimum(
        (flat_p * calibration.DEFAULT_BINS).astype(int), calibration.DEFAULT_BINS - 1
    )
    ones = np.eye(calibration.DEFAULT_BINS)[index]
    confidence = flat_p @ ones
    fake = (np.random.default_rng(seed).random((resamples, flat_p.size)) < flat_p).astype(float)
    null = np.abs(fake @ ones - confidence).sum(axis=1)
    ece = np.abs(flat_y @ ones - confidence).sum()
    return float((1 + np.sum(null >= ece - 1e-9)) / (resamples + 1))


def calibration_outcomes(
    design: str, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """Over ``benchmarks`` simulated runs of ``design``: the shares in which
    :func:`bla_metric.stats.calibration.calibration_summary` says "miscalibrated" (p < 0.05) for the
    calibrated model (``size``) and for one :data:`TOO_SURE` times too sure on the same labels
    (``power``), the share the per-sentence test says it for the calibrated one (``old``), and
    the calibrated model's mean ECE and mean floor."""
    counts = dict.fromkeys(("size", "power", "old", "ece", "floor"), 0.0)
    for _ in range(benchmarks):
        p, y = calibrated_run(design, n, rng)
        seed = int(rng.integers(2**31))
        fair = calibration.calibration_summary(p, y, resamples=resamples, seed=seed)
        sure = calibration.calibration_summary(too_sure(p), y, resamples=resamples, seed=seed)
        counts["size"] += fair["p_value"] < 0.05
        counts["power"] += sure["p_value"] < 0.05
        counts["old"] += independent_null_p(p, y, resamples, seed) < 0.05
        counts["ece"] += fair["ece"]
        counts["floor"] += fair["floor"]
    return {key: value / benchmarks for key, value in counts.items()}


def calibration_table(benchmarks: int, resamples: int, rng: np.random.Generator) -> list[str]:
    """The calibration test's size and power as Markdown lines."""
    rows = []
    for design in CALIBRATION_DESIGNS:
        for n in CALIBRATION_SIZES:
            row = calibration_outcomes(design, n, benchmarks, resamples, rng)
            shares = [_pm(row[k], benchmarks) for k in ("size", "power", "old")]
            means = [f"{100 * row[k]:.2f}%" for k in ("ece", "floor")]
            rows.append([f"{design}, n = {n}", *shares, *means])
    columns = (
        "calibration test (P(yes) ~ Beta(2, 2))", "calibrated: says miscalibrated (size)",
        f"{100 * (TOO_SURE - 1):g}% too sure: says miscalibrated (power)",
        "calibrated, per-sentence redraws: says miscalibrated", "calibrated: mean ECE",
        "mean floor",
    )  # fmt: skip
    return [markdown(Table("", columns, rows))]


TABLES = (
    "ranks",
    "small-ranks",
    "templates",
    "gain",
    "shares",
    "calibration",
    "clusters",
    "power",
    "power-check",
)
"""The tables of the report, in order (``--tables`` picks some); each draws from its own
stream of the seed, so a table gives the same numbers alone as in the whole report."""


def report(
    benchmarks: int,
    resamples: int,
    seed: int,
    tables: Sequence[str] = TABLES,
    workers: int = 1,
) -> str:
    """The tables named in ``tables`` as Markdown (``power`` in ``workers`` processes)."""
    lines = [
        f"Simulation: {benchmarks} benchmarks per scenario, {resamples} bootstrap resamples "
        f"each, seed {seed}; nominal level 95% (5% false alarms); ± is the Monte Carlo "
        "standard error of a share. The share intervals' coverage is exact (no simulation).",
    ]
    for index, table in enumerate(TABLES):
        if table not in tables:
            continue
        rng = np.random.default_rng([seed, index])
        if table == "ranks":
            scenarios = [(name, *rest) for name, rest in RANK_SCENARIOS.items()]
            found = rank_table(scenarios, benchmarks, resamples, rng)
        elif table == "small-ranks":
            found = rank_table(SMALL_RANK_SCENARIOS, benchmarks, resamples, rng)
        elif table == "templates":
            found = template_table(benchmarks, resamples, rng)
        elif table == "gain":
            found = gain_table(benchmarks, resamples, rng)
        elif table == "calibration":
            found = calibration_table(benchmarks, resamples, rng)
        elif table == "clusters":
            found = cluster_table(benchmarks, resamples, rng)
        elif table == "power":
            found = power_table(benchmarks, resamples, (seed, index), workers)
        elif table == "power-check":
            found = power_check_table(benchmarks, resamples, rng)
        else:
            found = share_table()
        lines += ["", *found]
    return "\n".join(lines) + "\n"


def _pm(share: float, count: int) -> str:
    """A simulated share in % with its Monte Carlo standard error over ``count`` trials."""
    error = np.sqrt(share * (1 - share) / count) if count else float("nan")
    return f"{100 * share:.1f}% ± {100 * error:.1f}"


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


@dataclass(frozen=True)
class SimulationSettings:
    """The options of ``python -m bla_eval.simulations.coverage``."""

    benchmarks: int = field(default=400, metadata={"help": "simulated benchmarks"})
    resamples: int = field(default=1000, metadata={"help": "bootstrap resamples"})
    seed: int = field(default=0, metadata={"help": "seed"})
    workers: int = field(
        default=1, metadata={"help": "processes for the power table (same numbers)"}
    )
    tables: str = field(
        default=",".join(TABLES),
        metadata={"help": "comma-separated tables to compute"},
    )


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog="python -m bla_eval.simulations.coverage",
        description="Coverage of the rank sets, false alarms of the template statements and "
        "outcomes of the image-gain test, by simulation.",
    )
    add_field_options(p, SimulationSettings)
    args = SimulationSettings(**field_values(SimulationSettings, p.parse_args(argv)))
    if args.benchmarks < 1 or args.resamples < 10 or args.workers < 1:
        p.error("--benchmarks and --workers must be at least 1 and --resamples at least 10")
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = [t for t in tables if t not in TABLES]
    if unknown or not tables:
        p.error(f"--tables: expected names from {', '.join(TABLES)}, got {args.tables!r}")
    print(report(args.benchmarks, args.resamples, args.seed, tables, args.workers), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
