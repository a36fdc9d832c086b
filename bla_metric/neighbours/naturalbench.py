"""NaturalBench's metrics (Li et al., NeurIPS 2024 D&B; ``example.py`` of Baiqi-Li/NaturalBench),
in plain NumPy.

Two questions x two images with opposite answers; ``acc`` over the four (question, image)
answers, ``q_acc`` a question right on both images, ``i_acc`` an image right for both questions,
``g_acc`` all four right. Generated answers are read as upstream's ``extract_answer`` reads each
question type (yes / no; multiple choice: A / B), the gold answers as :func:`naturalbench_gold`
(:func:`naturalbench_answer_metrics`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

NATURALBENCH_METRICS = ("acc", "q_acc", "i_acc", "g_acc")
"""NaturalBench's accuracies (``example.py``: binary, question, image and group score)."""


def naturalbench_outcomes(correct: Any) -> dict[str, np.ndarray]:
    """Per sample, from ``correct[k][i][q]`` (the answer to question ``q`` on image ``i`` is
    right): ``acc`` (share of the four right), ``q_acc`` and ``i_acc`` (share of the two
    questions / images right on both), ``g_acc`` (all four right)."""
    right = np.asarray(correct, dtype=bool)
    if right.ndim != 3 or right.shape[1:] != (2, 2):
        raise ValueError(f"correct must be one 2x2 matrix per sample, got shape {right.shape}")
    return {
        "acc": right.mean(axis=(1, 2)),
        "q_acc": right.all(axis=1).mean(axis=1),
        "i_acc": right.all(axis=2).mean(axis=1),
        "g_acc": right.all(axis=(1, 2)).astype(float),
    }


def naturalbench_metrics(correct: Any) -> dict[str, Any]:
    """NaturalBench's ``acc``, ``q_acc``, ``i_acc`` and ``g_acc`` over samples, and ``n``."""
    outcomes = naturalbench_outcomes(correct)
    result: dict[str, Any] = {k: float(v.mean()) for k, v in outcomes.items()}
    result["n"] = len(outcomes["acc"])
    return result


def naturalbench_correct(
    predicted: Sequence[Sequence[Sequence[int]]], gold: Sequence[Sequence[Sequence[int]]]
) -> np.ndarray:
    """``correct[k][i][q]``: the predicted answer (1 = yes) equals the gold one; an answer that
    could not be parsed (-1) is wrong."""
    predicted_array, gold_array = np.asarray(predicted), np.asarray(gold)
    if predicted_array.shape != gold_array.shape:
        raise ValueError(
            f"predictions have shape {predicted_array.shape} but the answers {gold_array.shape}"
        )
    return predicted_array == gold_array


def naturalbench_answer(text: str, question_type: str = "yes_no") -> int:
    """An answer as upstream ``extract_answer`` reads it: 1 when "yes" (``multiple_choice``:
    "A") comes first as a whole word (case-insensitive), 0 when "no" ("B") does, -1 when
    neither appears. Upstream's search ignores case for the letters too, so the article "a"
    reads as option A, as it does there."""
    first, second = naturalbench_options(question_type)

    def position(word: str) -> int:
        match = re.search(r"\b" + re.escape(word) + r"\b", text, re.IGNORECASE)
        return match.start() if match else -1

    at_first, at_second = position(first), position(second)
    if at_first == -1 and at_second == -1:
        return -1
    if at_first != -1 and at_second != -1:
        return 1 if at_first < at_second else 0
    return 0 if at_first == -1 else 1


def naturalbench_options(question_type: str = "yes_no") -> tuple[str, str]:
    """The two answers of a NaturalBench question type, the one read as 1 first: ("yes",
    "no") for ``yes_no``, ("A", "B") for ``multiple_choice`` (upstream ``extract_answer``'s
    words; the release's gold answers are these, capitalised or not)."""
    if question_type == "yes_no":
        return "yes", "no"
    if question_type == "multiple_choice":
        return "A", "B"
    raise ValueError(f"unknown question type {question_type!r}: use yes_no or multiple_choice")


def naturalbench_gold(answer: str, question_type: str = "yes_no") -> int:
    """A gold answer of the release as 1 / 0 (``Yes`` / ``No``; ``A`` / ``B``; any case, outer
    spaces ignored); anything else is a ValueError naming it."""
    first, second = naturalbench_options(question_type)
    said = str(answer).strip().lower()
    if said in (first.lower(), second.lower()):
        return int(said == first.lower())
    raise ValueError(f"a {question_type} answer must be {first} or {second}, got {answer!r}")


def naturalbench_answer_metrics(
    answers: Sequence[Sequence[Sequence[str]]],
    gold: Sequence[Sequence[Sequence[int]]],
    question_type: str = "yes_no",
) -> dict[str, Any]:
    """``acc``, ``q_acc``, ``i_acc``, ``g_acc`` and ``n`` of generated answers
    (``answers[k][i][q]``: the text answering question ``q`` on image ``i`` of sample ``k``)
    read as upstream ``extract_answer`` reads that question type, against the gold answers
    (1 / 0, :func:`naturalbench_gold`); an answer with neither word is wrong."""
    parsed = [
        [[naturalbench_answer(str(text), question_type) for text in image] for image in sample]
        for sample in answers
    ]
    predicted = np.asarray(parsed, int).reshape(-1, 2, 2)
    truth = np.asarray(gold, int).reshape(-1, 2, 2)
    return naturalbench_metrics(naturalbench_correct(predicted, truth))
