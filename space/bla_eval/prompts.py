"""The yes/no question put to generative models and the spellings of its answers.

One home for every model kind that asks the question (local generative models, API endpoints):
the prompt template, the answers of in-context demonstrations, and the first-token spellings
whose probabilities make P(yes) and P(no).
"""

from __future__ import annotations

QUESTION = "Question: Is the sentence {sentence} appropriate for this image? yes or no? Answer:"
"""The paper's question (§4.2); one per demonstration and one for the target (§6)."""

ANSWERS = {1: "yes", 0: "no"}
"""The answer of a true (1) and a false (0) demonstration."""

YES_WORDS = ("yes", "Yes", " yes", " Yes", "YES")
"""Spellings of "yes" as a first answer token; the probabilities of those that are one token
each are summed into P(yes)."""

NO_WORDS = ("no", "No", " no", " No", "NO")
"""Spellings of "no" as a first answer token, summed into P(no)."""
