"""The metric of the Hub's BLA tasks (``eval.yaml``), computed from generated answers anywhere.

Each task of the dataset's ``eval.yaml`` asks the model one yes/no question per (image,
sentence) and scores the answer with inspect-ai's ``match`` scorer (``location="begin"``,
``ignore_case=True``): the answer, stripped of white space and of punctuation at both ends and
case-folded, starts with the target word (``yes`` for a true sentence, ``no`` for a false one).
Its value is the share of sentences answered so, a proportion in [0, 1]. ``bla-eval export``
publishes exactly this under the task's id, from a ``bla-eval`` run's answers, a
``bla_eval/<task>`` log's ``answer_match`` metric or a Hub task's log; nothing here imports
inspect-ai.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

TARGETS = ("no", "yes")
"""The target word of a sentence by its label (0, 1)."""
STRIP = string.whitespace + string.punctuation
"""What inspect's ``match`` strips from both ends of the answer and the target."""
METRIC = "answer_match"
"""The name of this metric in a ``bla_eval/<task>`` log (the Hub task's own is ``accuracy``)."""
DESCRIPTION = (
    "yes/no answer accuracy per sentence: share of (image, sentence) questions whose greedy "
    "answer starts with the right word (inspect's match scorer at the beginning), a proportion "
    "in [0, 1]"
)
RESAMPLES = 1000
"""Bootstrap resamples of the interval published with the value (seed 0)."""


def matches(answer: str, label: int) -> bool:
    """Whether ``answer`` scores 1 under the Hub task's scorer for a sentence of ``label``."""
    return answer.strip().casefold().strip(STRIP).startswith(TARGETS[int(bool(label))])


def sentence_matches(
    answers: Sequence[Sequence[str]], labels: Sequence[Sequence[int]]
) -> list[list[int]]:
    """Per datapoint, 1 or 0 per sentence (the Hub task's per-sample scores)."""
    if len(answers) != len(labels):
        raise ValueError(f"{len(answers)} rows of answers for {len(labels)} rows of labels")
    out = []
    for row, truth in zip(answers, labels, strict=True):
        if len(row) != len(truth):
            raise ValueError(f"{len(row)} answers for {len(truth)} sentences")
        out.append([int(matches(str(a), y)) for a, y in zip(row, truth, strict=True)])
    return out


def answer_accuracy(answers: Sequence[Sequence[str]], labels: Sequence[Sequence[int]]) -> float:
    """The Hub task's value over datapoints: matched sentences / sentences."""
    hits = sentence_matches(answers, labels)
    total = sum(len(row) for row in hits)
    if total == 0:
        raise ValueError("no sentences to score")
    return sum(map(sum, hits)) / total


def answer_interval(
    answers: Sequence[Sequence[str]],
    labels: Sequence[Sequence[int]],
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of :func:`answer_accuracy`, datapoints resampled:
    the binary view's accuracy (``bla_metric.formulas.compute``) of the labels the answers
    give (a matched sentence keeps its label, a missed one gets the other)."""
    from bla_metric import formulas

    hits = sentence_matches(answers, labels)
    given = [
        [y if hit else 1 - int(y) for hit, y in zip(row, truth, strict=True)]
        for row, truth in zip(hits, labels, strict=True)
    ]
    low, high = formulas.compute(given, labels, "binary", bootstrap=resamples, seed=seed)["ci"][
        "accuracy"
    ]
    return float(low), float(high)
