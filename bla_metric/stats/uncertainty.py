"""The standard error of a metric that is a ratio of sums over datapoints (sentence accuracy:
correct sentences / sentences; a yes/no answer accuracy: matched sentences / sentences; a share
of datapoints when every denominator is 1).

:func:`ratio_standard_error` is the delta-method (linearisation) standard error over
datapoints, ``sqrt(n / (n - 1) * sum_i (a_i - r b_i)^2) / sum_i b_i`` with r = sum a / sum b:
for equal denominators it is the sample standard deviation of the per-datapoint ratios over
sqrt(n). It is what an Every Eval Ever record's ``standard_error`` carries (``bla-eval
export``); the intervals stay those of :mod:`bla_metric.formulas`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

METHOD = "delta method over datapoints: sqrt(n / (n - 1) * sum (a_i - r b_i)^2) / sum b_i"
"""How :func:`ratio_standard_error` is computed, in words for a record."""


def ratio_standard_error(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The standard error of r = sum(numerators) / sum(denominators) over datapoints (see the
    module). NaN where undefined: fewer than two datapoints, or a denominator sum of 0."""
    a = np.asarray(numerators, float)
    b = np.asarray(denominators, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(
            f"numerators {a.shape} and denominators {b.shape} must be one per datapoint"
        )
    n, total = len(a), float(b.sum())
    if n < 2 or total == 0:
        return float("nan")
    residual = a - (a.sum() / total) * b
    return float(np.sqrt(n / (n - 1) * np.sum(residual**2)) / total)
