"""Generated answers to the yes/no question, classified as the BLA authors' scripts do.

The authors' evaluation of BLIP-2 and OpenFlamingo (``evaluation_models/blip2/test_blip2_bla.py``
in the public repository shin-ee-chen/BLA) decodes the generation with special tokens skipped,
strips it, lower-cases it and removes one trailing ``"."``; then, by substring tests in this
order: ``"appropriate"`` counts as yes, else ``"yes"`` as yes, else ``"no"`` as no (so "not",
"nothing" and "know" are no), else the answer is unparsed and counted nowhere.
"""

from __future__ import annotations

from collections.abc import Iterable

YES, NO = "yes", "no"
"""The two classes of a parsed answer."""

RULES: tuple[tuple[str, str], ...] = (("appropriate", YES), ("yes", YES), ("no", NO))
"""(substring, class) tested in order on the normalised answer; the first match wins."""


ANSWER_SCORES: dict[str | None, float] = {YES: 1.0, NO: 0.0, None: 0.5}
"""The score a classified answer stands for: yes 1.0, no 0.0, unparsed 0.5 (undecided: no
evidence for either side; unparsed answers are counted and reported by whoever scores them)."""


def normalise_answer(text: str) -> str:
    """Stripped, lower-cased, one trailing ``"."`` removed (the authors' string rule)."""
    text = text.strip().lower()
    return text[:-1] if text.endswith(".") else text


def parse_answer(text: str) -> str | None:
    """``"yes"``, ``"no"``, or None when the authors' rules classify the answer nowhere.

    >>> [parse_answer(t) for t in ("yes.", "No", "it is not", "appropriate", "")]
    ['yes', 'no', 'no', 'yes', None]
    """
    answer = normalise_answer(text)
    for substring, label in RULES:
        if substring in answer:
            return label
    return None


def answer_score(text: str) -> float:
    """The score a generated answer stands for (:data:`ANSWER_SCORES`)."""
    return ANSWER_SCORES[parse_answer(text)]


def count_unparsed(answers: Iterable[str]) -> int:
    """How many answers the rules classify nowhere."""
    return sum(parse_answer(a) is None for a in answers)
