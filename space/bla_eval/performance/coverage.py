"""How well the leaderboard's and the robustness report's statistics hold, by simulation.

Run ``python -m bla_eval.performance.coverage [--benchmarks 400] [--resamples 1000] [--seed 0]``
(a few minutes on two cores). Three Markdown tables:

- rank sets: for equal models, near ties and separated models (per-datapoint sentence accuracy
  drawn as Binomial(4, p) / 4, models independent), the share of simulated benchmarks in which
  every model's true rank lies in its 95% set (simultaneous coverage) and the share of (benchmark,
  model) in which it does (marginal coverage), for the simultaneous and marginal sets of
  :func:`bla_metric.ranks.rank_sets` and for the percentile intervals of bootstrap ranks they
  replace; with the mean width of a set;
- templates: with templates of equal true accuracy, how often Cochran's Q says they differ and how
  often the set of templates that may be the best leaves one out (false alarms; nominal 5%);
- image gain: the share of runs whose outcome is each of helps / equivalent (answers from priors) /
  inconclusive / hurts, at a true gain of 0, 3 and 10 points, with the share the old rule (the
  gain's 95% interval contains 0) called "from priors".

Templates and image gains go through :mod:`bla_metric.robustness` itself; the rank sets through
:func:`bla_metric.ranks.rank_sets` on a vectorised bootstrap of the same datapoints for all
models (the metric is a mean over datapoints, so this equals :func:`bla_metric.formulas.resampled`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from bla_metric import ranks, robustness

LABELS = (1, 1, 0, 0)
RANK_SCENARIOS: dict[str, tuple[list[float], int]] = {
    "10 equal models": ([0.70] * 10, 600),
    "10 models 0.2 points apart": ([0.70 + 0.002 * k for k in range(10)], 600),
    "6 models, two ties": ([0.60, 0.60, 0.61, 0.61, 0.62, 0.64], 600),
    "4 models 5 points apart": ([0.55, 0.60, 0.65, 0.70], 600),
}
"""Name: (true sentence accuracy of each model, datapoints)."""
TEMPLATE_SCENARIOS = ((7, 100), (7, 600))
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


def rank_coverage(
    accuracy: Sequence[float], n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, dict[str, float]]:
    """{method: {"simultaneous", "marginal", "width"}} over ``benchmarks`` simulated ones."""
    truth = true_ranks(accuracy)
    methods = ("simultaneous", "marginal", "percentile")
    together = dict.fromkeys(methods, 0)
    each = dict.fromkeys(methods, 0)
    width = dict.fromkeys(methods, 0.0)
    for _ in range(benchmarks):
        values = rng.binomial(4, np.asarray(accuracy)[:, None], (len(accuracy), n)) / 4
        picks = rng.integers(0, n, (resamples, n))
        draws = values[:, picks].mean(axis=2)  # (models, resamples)
        observed = values.mean(axis=1)
        found = {
            "simultaneous": ranks.rank_sets(observed, draws),
            "marginal": ranks.rank_sets(observed, draws, kind="marginal"),
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


def sentence_scores(signal: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Scores (n, 4): the true sentences raised by ``signal`` (n,) above ``noise`` (n, 4)."""
    return noise + signal[:, None] * np.asarray(LABELS, float)


def template_false_alarms(
    templates: int, n: int, benchmarks: int, resamples: int, rng: np.random.Generator
) -> dict[str, float]:
    """With ``templates`` of equal true accuracy: the share of benchmarks in which Cochran's Q
    rejects and in which the set that may be best leaves a template out."""
    omnibus = excluded = 0
    labels = [list(LABELS)] * n
    for sim in range(benchmarks):
        difficulty = rng.normal(1.0, 0.7, n)  # shared by the templates: paired outcomes
        scores = {
            f"t{k}": sentence_scores(difficulty, rng.normal(size=(n, 4))).tolist()
            for k in range(templates)
        }
        result = robustness.template_sensitivity(scores, labels, resamples=resamples, seed=sim)
        omnibus += bool(result["omnibus"]["templates_matter"])
        excluded += len(result["indistinguishable_from_best"]) < templates
    return {"cochran_q": omnibus / benchmarks, "best_set": excluded / benchmarks}


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
    """Shares of :func:`bla_metric.robustness.image_gain`'s outcomes (and of the old rule) at a
    true gain of ``gain`` over a control of sentence accuracy 0.60."""
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


def report(benchmarks: int, resamples: int, seed: int) -> str:
    """The three tables as Markdown."""
    rng = np.random.default_rng(seed)
    lines = [
        f"Simulation: {benchmarks} benchmarks per scenario, {resamples} bootstrap resamples "
        f"each, seed {seed}; nominal level 95% (5% false alarms).",
        "",
        "| scenario | sets | all ranks covered | each rank covered | mean width |",
        "|---|---|---|---|---|",
    ]
    for name, (accuracy, n) in RANK_SCENARIOS.items():
        found = rank_coverage(accuracy, n, benchmarks, resamples, rng)
        for method, row in found.items():
            lines.append(
                f"| {name} (n = {n}) | {method} | {_pct(row['simultaneous'])} | "
                f"{_pct(row['marginal'])} | {row['width']:.2f} |"
            )
    lines += [
        "",
        "| equal templates | Cochran's Q says they differ | best set leaves one out |",
        "|---|---|---|",
    ]
    for templates, n in TEMPLATE_SCENARIOS:
        alarms = template_false_alarms(templates, n, benchmarks, resamples, rng)
        lines.append(
            f"| {templates} templates, n = {n} | {_pct(alarms['cochran_q'])} | "
            f"{_pct(alarms['best_set'])} |"
        )
    outcomes = (*robustness.GAIN_OUTCOMES, "old rule")
    lines += [
        "",
        f"| true image gain (n = {GAIN_N}, margin "
        f"{100 * robustness.EQUIVALENCE_MARGIN:g} points) | "
        + " | ".join("from priors (old rule)" if o == "old rule" else o for o in outcomes)
        + " |",
        "|---|" + "---|" * len(outcomes),
    ]
    for gain in GAINS:
        shares = gain_outcomes(gain, GAIN_N, benchmarks, resamples, rng)
        lines.append(
            f"| {100 * gain:g} points | " + " | ".join(_pct(shares[o]) for o in outcomes) + " |"
        )
    return "\n".join(lines) + "\n"


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bla_eval.performance.coverage",
        description="Coverage of the rank sets, false alarms of the template statements and "
        "outcomes of the image-gain test, by simulation.",
    )
    p.add_argument("--benchmarks", type=int, default=400, help="simulated benchmarks (400)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    p.add_argument("--seed", type=int, default=0, help="seed (0)")
    args: Any = p.parse_args(argv)
    if args.benchmarks < 1 or args.resamples < 10:
        p.error("--benchmarks must be at least 1 and --resamples at least 10")
    print(report(args.benchmarks, args.resamples, args.seed), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
