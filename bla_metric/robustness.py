"""How much a score depends on the prompt and on the image: the formulas of a prompt sweep and of an
image-versus-prior control, and Kendall's tau between model rankings.

- :func:`template_sensitivity`: one metric per template with a 95% bootstrap interval (the same
  datapoint draws for every template, so differences stay paired), the spread (best - worst, with
  its interval), and the templates whose difference to the best has an interval containing 0
  (statistically indistinguishable from it).
- :func:`task_order`: whether the order of the tasks by a metric changes across templates.
- :func:`image_gain`: the metric with the real image minus with the control image, with a paired
  bootstrap interval; an interval containing 0 flags a model that answers from language priors.
- :func:`kendall_tau` and :func:`ranking_agreement`: tau-b between the model rankings of two
  templates, for every pair of templates.

Per-datapoint statistics and their resampling come from :mod:`bla_metric.formulas` (via
:mod:`bla_metric.significance`): no formula is written twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from . import formulas, significance

PERCENTILES = (2.5, 97.5)
"""The 95% percentile interval of every bootstrap here."""


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
    ``spread`` ({"value": best - worst, "ci"}: the same two templates on every resample), and
    ``indistinguishable_from_best``: the best and every template whose paired difference to it
    has a 95% interval reaching 0. One datapoint draw per resample serves every template.
    """
    if not scores:
        raise ValueError("template_sensitivity needs at least one template")
    names = list(scores)
    stats = [significance.datapoint_stats(scores[n], references, mode, threshold) for n in names]
    observed = [significance.aggregate(mode, s)[metric] for s in stats]
    draws = [d[metric] for d in formulas.resampled(mode, stats, resamples, seed)]
    best = int(np.argmax(observed))
    worst = int(np.argmin(observed))
    tied = [
        names[i]
        for i in range(len(names))
        if i == best or _interval(draws[best] - draws[i])[0] <= 0.0
    ]
    return {
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
            "ci": _interval(draws[best] - draws[worst]),
        },
        "indistinguishable_from_best": tied,
    }


def task_order(values: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """``values``: template -> task -> metric. The tasks of each template from best to worst
    (ties keep the task order given) and whether that order differs between any two."""
    orders = {name: sorted(tasks, key=lambda t, v=tasks: -v[t]) for name, tasks in values.items()}
    distinct = {tuple(order) for order in orders.values()}
    return {"orders": orders, "changes": len(distinct) > 1}


def image_gain(
    real: Sequence[Sequence[float]],
    control: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    metric: str = "sentence_accuracy",
    mode: str = "ranking",
    threshold: float | str | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The image gain of ``metric``: with the real image minus with the control image of the
    same datapoints, a paired bootstrap 95% interval and p-value
    (:func:`bla_metric.significance.paired_bootstrap`); ``from_priors`` is True when the
    interval contains 0 (the image made no difference the benchmark can detect)."""
    paired = significance.paired_bootstrap(
        real, control, references, mode, threshold, resamples, seed
    )[metric]
    low, high = paired["ci"]
    return {
        "metric": metric,
        "real": paired["a"],
        "control": paired["b"],
        "gain": paired["difference"],
        "ci": [low, high],
        "p_value": paired["p_value"],
        "from_priors": bool(low <= 0.0 <= high),
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


def ranking_agreement(values: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """``values``: template -> model -> metric (the models every template has). Kendall's tau-b
    between the model rankings of each pair of templates: {"models": [...], "pairs":
    [{"a", "b", "tau"}, ...]}."""
    names = list(values)
    models = [m for m in (values[names[0]] if names else {}) if all(m in values[t] for t in names)]
    pairs = []
    for first, second in combinations(names, 2):
        tau = kendall_tau([values[first][m] for m in models], [values[second][m] for m in models])
        pairs.append({"a": first, "b": second, "tau": tau})
    return {"models": models, "pairs": pairs}
