"""Prompt templates: the yes/no question put to generative models, how a sentence is put in it,
how in-context demonstrations are shown, and the spellings of the answers.

One registry for every model kind that asks the question (local generative models, API
endpoints): ``bla`` (the default: the paper's question, §4.2 and §6) and ``authors`` (the strings
of the authors' released script). A protocol names the template it asks with
(``Protocol.template``); :func:`register_template` adds one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bla_metric.answers import NO, YES

from .registry import Registry

ANSWERS = {1: YES, 0: NO}
"""The answer of a true (1) and a false (0) demonstration."""

YES_WORDS = ("yes", "Yes", " yes", " Yes", "YES")
"""Spellings of "yes" as a first answer token; the probabilities of those that are one token
each are summed into P(yes)."""

NO_WORDS = ("no", "No", " no", " No", "NO")
"""Spellings of "no" as a first answer token, summed into P(no)."""


def named_sentence(question: str, sentence: str) -> str:
    """``question`` with ``sentence`` in its ``{sentence}`` field."""
    return question.format(sentence=sentence)


@dataclass(frozen=True)
class PromptTemplate:
    """How one question is asked.

    - ``question``: the target's question; ``fill(question, sentence)`` puts a sentence in it and
      gives the text of one question turn (default: the ``{sentence}`` field);
    - ``in_context_question``: the question of every turn when demonstrations are shown
      (empty: ``question``);
    - ``answers``: demonstration answer (``yes``/``no``) -> the text shown for it;
    - ``turn``: a demonstration in the one-string prompt (``{question}``, ``{answer}``); the
      turns and the target's question are joined by ``separator``;
    - ``source``: where the strings come from.
    """

    name: str
    question: str
    source: str
    fill: Callable[[str, str], str] = named_sentence
    in_context_question: str = ""
    answers: Mapping[str, str] = field(default_factory=lambda: {YES: YES, NO: NO})
    turn: str = "{question} {answer}."
    separator: str = " "

    def ask(self, sentence: str, in_context: bool = False) -> str:
        """The text of one question turn about ``sentence``."""
        question = (self.in_context_question or self.question) if in_context else self.question
        return self.fill(question, sentence)

    def turns(
        self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()
    ) -> list[tuple[str, str | None]]:
        """(question text, shown answer) per turn: each demonstration, then the target's
        question with answer None."""
        in_context = bool(demonstrations)
        shown = [(self.ask(s, in_context), self.answers[a]) for s, a in demonstrations]
        return [*shown, (self.ask(sentence, in_context), None)]

    def plain(self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()) -> str:
        """The one-string prompt: each demonstration as ``turn``, then the target's question.
        No demonstrations = the zero-shot prompt."""
        texts = [
            question if answer is None else self.turn.format(question=question, answer=answer)
            for question, answer in self.turns(sentence, demonstrations)
        ]
        return self.separator.join(texts)

    def chat(
        self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()
    ) -> list[dict[str, Any]]:
        """Chat turns for a processor's chat template: the image in the first user turn, each
        demonstration as a user question and the assistant's answer, then the target's
        question."""
        messages: list[dict[str, Any]] = []
        for question, answer in self.turns(sentence, demonstrations):
            content: list[dict[str, Any]] = [] if messages else [{"type": "image"}]
            content.append({"type": "text", "text": question})
            messages.append({"role": "user", "content": content})
            if answer is not None:
                messages.append(
                    {"role": "assistant", "content": [{"type": "text", "text": answer}]}
                )
        return messages


AUTHORS_TEMPLATE = "Question: {} Answer: {}"
"""The authors' frame of one turn: ``AUTHORS_TEMPLATE.format(question, answer)``."""
AUTHORS_QUESTION = "Is the sentence {} appropriate for this image? yes or no?"
"""The authors' zero-shot question."""
AUTHORS_ICL_QUESTION = "Is the sentence {} appropriate for this image?"
"""The authors' question of every in-context turn (no "yes or no?")."""


def authors_sentence(question: str, sentence: str) -> str:
    """The authors' question turn: ``"Question: <question> Answer: "`` (trailing space)."""
    return AUTHORS_TEMPLATE.format(question.format(sentence), "")


DEFAULT_TEMPLATE = "bla"
"""The template every kind asks with unless its protocol names another."""

BLA = PromptTemplate(
    DEFAULT_TEMPLATE,
    "Question: Is the sentence {sentence} appropriate for this image? yes or no? Answer:",
    "the paper's question (§4.2); one per demonstration and one for the target (§6)",
)
AUTHORS = PromptTemplate(
    "authors",
    AUTHORS_QUESTION,
    "the authors' script evaluation_models/blip2/test_blip2_bla.py (shin-ee-chen/BLA)",
    fill=authors_sentence,
    in_context_question=AUTHORS_ICL_QUESTION,
    answers={YES: "yes.", NO: "no."},
    turn="{question}{answer}",
)

TEMPLATES: Registry[PromptTemplate] = Registry("prompt template")
"""Template name -> template, built-in first, then registered."""
register_template = TEMPLATES.register
unregister_template = TEMPLATES.unregister
template_names = TEMPLATES.names


def get_template(name: str = DEFAULT_TEMPLATE) -> PromptTemplate:
    """The template named ``name`` (a ValueError names an unknown one and the choices)."""
    return TEMPLATES.require(name)


for _builtin in (BLA, AUTHORS):
    register_template(_builtin)
