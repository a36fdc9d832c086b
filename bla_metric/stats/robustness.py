"""How much a score depends on the prompt and on the image: the formulas of a prompt sweep and of an
image-versus-prior control, and Kendall's tau between model rankings.

- :func:`template_sensitivity`: one metric per template with a 95% bootstrap interval (the same
  datapoint draws for every template, so differences stay paired); Cochran's Q, the omnibus test
  that the templates differ (on set accuracy, a 0/1 outcome per datapoint); the range (best -
  worst) with a bootstrap of the range itself (on each resample the best minus the worst template
  of that resample: an observed best and worst are not taken as chosen in advance); and the
  templates that may be the best: the 95% confidence set for the best of
  :func:`bla_metric.stats.ranks.permutation_rank_sets` (simultaneous over all pairs of templates;
  the bootstrap's :func:`bla_metric.stats.ranks.rank_sets` for a metric without per-datapoint
  values).
- :func:`sweep_sensitivity`: the above for every task, and :func:`task_order`: the order of the
  tasks under each template, whether it changes, and the share of resamples in which every
  template keeps its observed order (a description, not a test).
- :func:`image_gain`: the metric with the real image minus with the control image, with a paired
  bootstrap interval, and one of four outcomes: the image ``helps`` (95% interval above 0),
  ``hurts`` (below 0), is ``equivalent`` to no help within ``margin`` (the 90% interval inside
  (-margin, margin): two one-sided tests at 5%, the model answers from language priors), or the
  data are ``inconclusive`` (always so when the resampled gain does not vary: no evidence).
- :func:`kendall_tau` and :func:`ranking_agreement`: tau-b between the model rankings of two
  templates, for every pair of templates, with the share of resamples keeping tau's sign.

Per-datapoint statistics and their resampling come from :mod:`bla_metric.formulas` (via
:mod:`bla_metric.stats.significance`): no formula is written twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from .. import formulas
from . import ranks, significance

PERCENTILES = (2.5, 97.5)
"""The 95% percentile interval of every bootstrap here."""
ALPHA = 0.05
"""The level of the tests here (Cochran's Q, the best set, the equivalence test)."""
EQUIVALENCE_MARGIN = 0.02
"""The default margin of the image-gain equivalence test: a gain within 2 points of 0 is no gain."""
GAIN_OUTCOMES = ("helps", "hurts", "equivalent", "inconclusive")


def _interval(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.percentile(values, PERCENTILES)]


def template_sensitivity(
    scores: Mapping[str, Sequence[Sequence[float]]],
    references: Sequence[Sequence[int]],
    metric: str = "sentence_accuracy",
    mode: str = "ranking",
    threshold: float | str | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Sensitivity of ``metric`` to the template: ``scores`` maps a template to its predictions
    of the same datapoints (``references``).

    Returns ``templates`` ({name: {"value", "ci"}}), ``best`` and ``worst`` (observed),
    ``spread`` ({"value": best - worst, "ci": percentile interval of the range over resamples}),
    ``may_be_best`` (the 95% confidence set for the best template; runs written before the
    permutation step-down held it as ``indistinguishable_from_best``) and
    ``omnibus`` (Cochran's Q on set accuracy, ranking view only, else None). One datapoint draw
    per resample serves every template."""
    return _sensitivity(scores, references, metric, mode, threshold, resamples, seed)[0]


def _sensitivity(
    scores: Mapping[str, Sequence[Sequence[float]]],
    references: Sequence[Sequence[int]],
    metric: str,
    mode: str,
    threshold: float | str | None,
    resamples: int,
    seed: int,
) -> tuple[dict[str, Any], np.ndarray]:
    """:func:`template_sensitivity` and its draws (templates, resamples)."""
    if not scores:
        raise ValueError("template_sensitivity needs at least one template")
    names = list(scores)
    stats = [significance.datapoint_stats(scores[n], references, mode, threshold) for n in names]
    observed = np.array([significance.aggregate(mode, s)[metric] for s in stats])
    draws = np.stack([d[metric] for d in formulas.resampled(mode, stats, resamples, seed)])
    best, worst = int(np.argmax(observed)), int(np.argmin(observed))
    if resamples and ranks.rank_method(mode, metric, None) == ranks.RANK_METHODS[0]:
        values = np.stack([ranks.datapoint_values(mode, metric, s) for s in stats])
        sets = ranks.permutation_rank_sets(values, resamples, seed, ALPHA)
    else:
        sets = ranks.rank_sets(observed, draws, ALPHA)
    may_be_best = ranks.best_set(sets)
    omnibus = None
    if mode == "ranking":
        test = significance.cochran_q(np.stack([s["set_accuracy"] for s in stats], axis=1))
        matter = bool(test["p_value"] < ALPHA)  # NaN (undefined) is no evidence
        omnibus = {"test": "cochran_q", "metric": "set_accuracy", **test}
        omnibus["templates_matter"] = matter
    result = {
        "metric": metric,
        "resamples": resamples,
        "templates": {
            n: {"value": float(v), "ci": _interval(d)}
            for n, v, d in zip(names, observed, draws, strict=True)
        },
        "best": names[best],
        "worst": names[worst],
        "spread": {
            "value": float(observed[best] - observed[worst]),
            "ci": _interval(draws.max(axis=0) - draws.min(axis=0)),
        },
        "may_be_best": [names[i] for i in may_be_best],
        "omnibus": omnibus,
    }
    return result, draws


def sweep_sensitivity(
    by_task: Mapping[str, tuple[Mapping[str, Sequence[Sequence[float]]], Sequence[Sequence[int]]]],
    metric: str = "sentence_accuracy",
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """``by_task``: task -> (template -> predictions, references). {"tasks": task ->
    :func:`template_sensitivity` (ranking view), "task_order": :func:`task_order` with the
    resampled values}."""
    per_task, draws = {}, {}
    for task, (scores, references) in by_task.items():
        per_task[task], draws[task] = _sensitivity(
            scores, references, metric, "ranking", None, resamples, seed
        )
    templates = list(next(iter(by_task.values()))[0]) if by_task else []
    values = {
        t: {task: s["templates"][t]["value"] for task, s in per_task.items()} for t in templates
    }
    resampled = {t: {task: draws[task][k] for task in per_task} for k, t in enumerate(templates)}
    return {"tasks": per_task, "task_order": task_order(values, resampled)}


def task_order(
    values: Mapping[str, Mapping[str, float]],
    draws: Mapping[str, Mapping[str, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """``values``: template -> task -> metric. The tasks of each template from best to worst
    (ties keep the task order given) and whether that order differs between any two. With
    ``draws`` (template -> task -> resampled metric): ``recurs``, the share of resamples in which
    every template keeps its observed order (NaN without resamples)."""
    orders = {name: sorted(tasks, key=lambda t, v=tasks: -v[t]) for name, tasks in values.items()}
    distinct = {tuple(order) for order in orders.values()}
    out: dict[str, Any] = {"orders": orders, "changes": len(distinct) > 1}
    if draws is not None:
        kept = None
        for name, order in orders.items():
            given = list(values[name])
            for first, second in zip(order, order[1:], strict=False):
                a, b = np.asarray(draws[name][first]), np.asarray(draws[name][second])
                holds = (a > b) | ((a == b) & (given.index(first) < given.index(second)))
                kept = holds if kept is None else kept & holds
        out["recurs"] = float(np.mean(kept)) if kept is not None and kept.size else float("nan")
    return out


def image_gain(
    real: Sequence[Sequence[float]],
    control: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    metric: str = "sentence_accuracy",
    mode: str = "ranking",
    threshold: float | str | None = None,
    resamples: int = 2000,
    seed: int = 0,
    margin: float = EQUIVALENCE_MARGIN,
) -> dict[str, Any]:
    """The image gain of ``metric``: with the real image minus with the control image of the
    same datapoints, a paired bootstrap 95% interval and p-value
    (:func:`bla_metric.stats.significance.paired_bootstrap`), the 90% interval of the equivalence
    test, its ``margin`` and the ``outcome`` (:data:`GAIN_OUTCOMES`, see the module's
    description); ``from_priors`` is True when the outcome is ``equivalent``. ``variation`` is
    False when every resample gave the same gain (every datapoint tied in both conditions, a
    handful of datapoints): the outcome is then ``inconclusive``, whatever the intervals of
    width 0 say, and reports print "inconclusive (no variation)"."""
    if not margin > 0:
        raise ValueError(f"the equivalence margin must be above 0, got {margin}")
    stats = [significance.datapoint_stats(p, references, mode, threshold) for p in (real, control)]
    paired = significance.paired_bootstrap_stats(*stats, mode, resamples, seed)[metric]
    draws_real, draws_control = formulas.resampled(mode, stats, resamples, seed)
    difference = draws_real[metric] - draws_control[metric]
    equivalence = [float(v) for v in np.percentile(difference, [100 * ALPHA, 100 * (1 - ALPHA)])]
    low, high = paired["ci"]
    if not paired["variation"]:
        outcome = "inconclusive"  # every resample gave the same gain: no evidence either way
    elif low > 0:
        outcome = "helps"
    elif high < 0:
        outcome = "hurts"
    elif -margin < equivalence[0] and equivalence[1] < margin:
        outcome = "equivalent"
    else:
        outcome = "inconclusive"
    return {
        "metric": metric,
        "real": paired["a"],
        "control": paired["b"],
        "gain": paired["difference"],
        "ci": [low, high],
        "p_value": paired["p_value"],
        "margin": margin,
        "equivalence_ci": equivalence,
        "outcome": outcome,
        "from_priors": outcome == "equivalent",
        "variation": paired["variation"],
    }


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two score lists of the same items (ties in either count as
    neither concordant nor discordant; the denominator corrects for them). NaN when either list
    is constant or has fewer than two items."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"kendall_tau needs two flat lists of equal length, got {x.shape}, {y.shape}"
        )
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    pairs_x, pairs_y = np.count_nonzero(dx), np.count_nonzero(dy)
    if pairs_x == 0 or pairs_y == 0:
        return float("nan")
    return float((dx * dy).sum() / np.sqrt(float(pairs_x) * float(pairs_y)))


def ranking_agreement(
    values: Mapping[str, Mapping[str, float]],
    draws: Mapping[str, Mapping[str, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """``values``: template -> model -> metric (the models every template has). Kendall's tau-b
    between the model rankings of each pair of templates: {"models": [...], "pairs":
    [{"a", "b", "tau"}, ...]}. With ``draws`` (template -> model -> resampled metric, the same
    datapoint draws for every model) each pair also has ``sign_recurs``: the share of resamples
    whose tau has the observed sign (NaN when tau is 0 or undefined)."""
    names = list(values)
    models = [m for m in (values[names[0]] if names else {}) if all(m in values[t] for t in names)]
    pairs = []
    for first, second in combinations(names, 2):
        tau = kendall_tau([values[first][m] for m in models], [values[second][m] for m in models])
        pair: dict[str, Any] = {"a": first, "b": second, "tau": tau}
        if draws is not None:
            taus = _resampled_tau(
                np.stack([draws[first][m] for m in models]),
                np.stack([draws[second][m] for m in models]),
            )
            same = np.sign(taus) == np.sign(tau)
            pair["sign_recurs"] = float(same.mean()) if tau == tau and tau != 0 else float("nan")
        pairs.append(pair)
    return {"models": models, "pairs": pairs}


def _resampled_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of :func:`kendall_tau` per column of ``x`` and ``y`` (models,
    resamples); NaN where either column is constant."""
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    pairs_x, pairs_y = np.count_nonzero(dx, axis=0), np.count_nonzero(dy, axis=0)
    denominator = np.sqrt(pairs_x.astype(float) * pairs_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=0) / denominator, np.nan)
