"""Scores from chat-completion responses: P(yes) / (P(yes) + P(no)) from the first answer token's
top log-probabilities, or a generated answer classified by the authors' string rules.

Log-probabilities: P(yes) sums the probabilities of the ``YES_WORDS`` spellings among the top
alternatives of the first answer token, P(no) those of ``NO_WORDS`` (the spellings the local
generative kind sums). A side absent from the top list counts as 0 (its true probability is at
most the smallest listed one), so the score is then 0 or 1; such answers are counted, by side.
When neither side is listed the score comes from the answer text as below and is counted too.

A vLLM server is asked for the log-probabilities of exactly the yes/no tokens
(``logprob_token_ids``, by id): both sides then always have a value, whatever their rank.

Generated answers (``bla_metric.answers.parse_answer``): yes scores 1.0, no 0.0, and an answer
the rules classify nowhere 0.5 (undecided: no evidence for either side), counted as unparsed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bla_metric.answers import ANSWER_SCORES, parse_answer

from ..protocols.templates import NO_WORDS, YES_WORDS

OUTCOMES = (
    "both",
    "no_missing",
    "yes_missing",
    "neither",
    "without_logprobs",
    "parsed",
    "unparsed",
)
"""How answers were scored: from log-probabilities with both sides in the top list, with one side
missing (that side counted as 0), with neither (scored from the text); from a response that came
without log-probabilities on the log-probability path (scored from its text, and counted again as
parsed or unparsed); or from a parsed or unparsed generated answer."""


@dataclass(frozen=True)
class Answer:
    """One scored answer: the score, the answer text, and how it was scored (``OUTCOMES``)."""

    score: float
    text: str
    outcome: str


def first_choice(doc: dict[str, Any]) -> dict[str, Any]:
    """The first choice of a response ({} when there is none)."""
    choices = doc.get("choices") or [{}]
    return choices[0] if isinstance(choices[0], dict) else {}


def answer_text(doc: dict[str, Any]) -> str:
    """The generated text of a response ('' when it has none)."""
    message = first_choice(doc).get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def first_token_alternatives(doc: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The top log-probabilities of the first generated token (None when the response has none)."""
    logprobs = first_choice(doc).get("logprobs") or {}
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content or not isinstance(content[0], dict):
        return None
    top = content[0].get("top_logprobs")
    return top if isinstance(top, list) and top else None


def from_text(text: str) -> Answer:
    """A generated answer scored by the authors' string rules."""
    label = parse_answer(text)
    return Answer(ANSWER_SCORES[label], text, "unparsed" if label is None else "parsed")


def from_logprobs(alternatives: list[dict[str, Any]], text: str) -> Answer:
    """P(yes) / (P(yes) + P(no)) over the listed alternatives of the first answer token."""
    p_yes = _mass(alternatives, YES_WORDS)
    p_no = _mass(alternatives, NO_WORDS)
    if p_yes == 0 and p_no == 0:
        return Answer(from_text(text).score, text, "neither")
    outcome = "both" if p_yes and p_no else ("no_missing" if p_yes else "yes_missing")
    return Answer(p_yes / (p_yes + p_no), text, outcome)


TOKEN_ID_PREFIX = "token_id:"
"""How a vLLM server spells a token asked with ``return_tokens_as_token_ids``."""


def from_token_ids(
    alternatives: list[dict[str, Any]], yes_ids: list[int], no_ids: list[int], text: str
) -> Answer:
    """P(yes) / (P(yes) + P(no)) from the log-probabilities of exactly the yes/no tokens (a
    vLLM server's answer to ``logprob_token_ids`` with ``return_tokens_as_token_ids``); a
    response without them is scored from its text, as ``neither``."""
    logprobs: dict[int, float] = {}
    for alt in alternatives:
        token = alt.get("token") if isinstance(alt, dict) else None
        logprob = alt.get("logprob") if isinstance(alt, dict) else None
        number = token[len(TOKEN_ID_PREFIX) :] if isinstance(token, str) else ""
        if (
            isinstance(token, str)
            and token.startswith(TOKEN_ID_PREFIX)
            and number.isdigit()
            and isinstance(logprob, (int, float))
            and math.isfinite(logprob)
        ):
            logprobs[int(number)] = logprob
    p_yes = sum(math.exp(logprobs[i]) for i in yes_ids if i in logprobs)
    p_no = sum(math.exp(logprobs[i]) for i in no_ids if i in logprobs)
    if p_yes == 0 and p_no == 0:
        return Answer(from_text(text).score, text, "neither")
    outcome = "both" if p_yes and p_no else ("no_missing" if p_yes else "yes_missing")
    return Answer(p_yes / (p_yes + p_no), text, outcome)


def _mass(alternatives: list[dict[str, Any]], words: tuple[str, ...]) -> float:
    """Summed probability of the alternatives spelled as one of ``words``."""
    total = 0.0
    for alt in alternatives:
        if isinstance(alt, dict) and alt.get("token") in words:
            logprob = alt.get("logprob")
            if isinstance(logprob, (int, float)) and math.isfinite(logprob):
                total += math.exp(logprob)
    return total
