"""What the engine asks a model about one image: a sentence, with the in-context demonstrations
shown before it (the protocols build them, the scorers read them)."""

from __future__ import annotations

from dataclasses import dataclass

Demonstrations = tuple[tuple[str, str], ...]
"""``(sentence, "yes"|"no")`` turns shown before a target sentence, in order; empty = zero-shot."""


@dataclass(frozen=True)
class Query:
    """A sentence to score against an image, with the in-context demonstrations shown before it.

    ``demonstrations`` are ``(sentence, answer)`` turns ("yes"/"no"), in order; empty = zero-shot.
    Only generative kinds read them; the others score ``sentence``. ``template``: the prompt
    template asked with (a name of ``bla_eval.protocols.templates``; empty: the run's).
    """

    sentence: str
    demonstrations: Demonstrations = ()
    template: str = ""
