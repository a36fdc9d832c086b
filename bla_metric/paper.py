"""The BLA authors' statistics of generated yes/no answers (the paper's generative protocol).

Rule, from ``evaluation_models/blip2/test_blip2_bla.py`` and ``bla_utils.get_cls_statistics`` in
the public repository shin-ee-chen/BLA: every generated answer is classified with the authors'
string rules (:func:`bla_metric.answers.parse_answer`); a "yes" to a true sentence is a true
positive (TP), to a false sentence a false positive (FP); a "no" to a false sentence is a true
negative (TN), to a true sentence a false negative (FN); an unparsed answer is counted nowhere.
Then, over the parsed answers only::

    accuracy        = (TP + TN) / (TP + FP + TN + FN)
    precision_true  = TP / (TP + FP)      (their y_precision)
    recall_true     = TP / (TP + FN)      (their y_recall)
    precision_false = TN / (TN + FN)      (their n_precision)
    recall_false    = TN / (TN + FP)      (their n_recall)

These are the binary-view formulas of :mod:`bla_metric.formulas` applied to the parsed counts, so
they are computed by the same aggregation (a zero denominator gives 0.0, where the authors' code
would divide by zero). ``all_same_rate`` counts datapoints whose every answer was parsed and got
one same label, over all datapoints. ``parsed`` / ``unparsed`` count sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import formulas
from .answers import YES, parse_answer

PAPER_METRICS = (*formulas.BINARY_METRICS, "parsed", "unparsed")
"""Keys of :func:`paper_metrics` (besides ``n`` and, with a bootstrap, ``ci``)."""


def parsed_labels(answers: Sequence[Sequence[str]]) -> list[list[int | None]]:
    """Per datapoint, 1 for a parsed "yes", 0 for a parsed "no", None for an unparsed answer."""
    out = []
    for row in answers:
        parsed = [parse_answer(a) for a in row]
        out.append([None if p is None else int(p == YES) for p in parsed])
    return out


def datapoint_stats(
    answers: Sequence[Sequence[str]], labels: Sequence[Sequence[int]]
) -> dict[str, np.ndarray]:
    """Per-datapoint counts ``tp``, ``fp``, ``tn``, ``fn`` (parsed answers only), ``all_same``,
    ``parsed`` and ``unparsed`` ({name: array (n,)}); answers and labels align sentence by
    sentence (an error names the first datapoint where they do not)."""
    if len(answers) != len(labels):
        raise ValueError(f"{len(answers)} answer lists for {len(labels)} label lists")
    keys = ("tp", "fp", "tn", "fn", "all_same", "parsed", "unparsed")
    stats = {key: np.zeros(len(labels)) for key in keys}
    for i, (predicted, truth) in enumerate(zip(parsed_labels(answers), labels, strict=True)):
        if len(predicted) != len(truth):
            raise ValueError(f"datapoint {i}: {len(predicted)} answers for {len(truth)} labels")
        pairs = [(p, int(y)) for p, y in zip(predicted, truth, strict=True) if p is not None]
        stats["tp"][i] = sum(p and y for p, y in pairs)
        stats["fp"][i] = sum(p and not y for p, y in pairs)
        stats["tn"][i] = sum(not p and not y for p, y in pairs)
        stats["fn"][i] = sum(not p and y for p, y in pairs)
        stats["parsed"][i] = len(pairs)
        stats["unparsed"][i] = len(predicted) - len(pairs)
        stats["all_same"][i] = float(
            len(pairs) == len(predicted) > 0 and len({p for p, _ in pairs}) == 1
        )
    return stats


def paper_metrics(
    answers: Sequence[Sequence[str]],
    labels: Sequence[Sequence[int]],
    bootstrap: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """The authors' binary statistics of generated ``answers`` (one list per datapoint, raw
    text) against ``labels`` (1 = true sentence): :data:`PAPER_METRICS`, ``n`` (datapoints) and,
    with ``bootstrap`` > 0 resamples of datapoints, ``ci`` ({metric: [low, high]}, 95%
    percentile interval, seeded) as in :func:`bla_metric.formulas.compute`."""
    stats = datapoint_stats(answers, labels)
    result: dict[str, Any] = formulas._aggregate("binary", stats)
    result |= {
        "parsed": int(stats["parsed"].sum()),
        "unparsed": int(stats["unparsed"].sum()),
        "n": len(labels),
    }
    if bootstrap and len(labels):
        result["ci"] = formulas._bootstrap("binary", stats, bootstrap, seed)
    return result
