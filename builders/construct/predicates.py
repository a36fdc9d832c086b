"""Predicates: cleaning VG predicate strings, passive flipping, and verb forms (``lemminflect``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lemminflect import getAllLemmas, getInflection, getLemma

ARTICLES = frozenset({"a", "an", "the"})
POSSESSIVES = frozenset({"his", "her", "their", "its", "my", "your", "our"})
AUXILIARIES = frozenset({"is", "are", "was", "were", "be", "being", "been", "am"})
NOT_VERBS = frozenset(
    {
        "in",
        "on",
        "with",
        "of",
        "at",
        "by",
        "near",
        "for",
        "to",
        "from",
        "under",
        "above",
        "behind",
        "beside",
        "inside",
        "over",
        "and",
        "around",
        "along",
        "against",
        "into",
        "onto",
        "up",
        "has a",
    }
)
"""First words that never start a verb phrase (prepositions VG uses as predicates)."""

_WORD = re.compile(r"[a-z0-9'-]+")


def read_word_list(path: Path) -> list[str]:
    """Non-empty, non-comment lines of a word list, lower-cased, in file order, without repeats."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"word list {path} not found")
    words: dict[str, None] = {}
    for line in Path(path).read_text(encoding="utf-8").split("\n"):  # lines end at \n only
        line = " ".join(line.lower().split())
        if line and not line.startswith("#"):
            words[line] = None
    return list(words)


@dataclass(frozen=True)
class Verb:
    """A verb lemma with its particles or complement: ``Verb("look", ("at",))`` = "look at"."""

    lemma: str
    rest: tuple[str, ...] = ()

    @property
    def phrase(self) -> str:
        return " ".join((self.lemma, *self.rest))

    def _with(self, head: str) -> str:
        return " ".join((head, *self.rest))

    def present(self, plural: bool = False) -> str:
        """3rd person simple present: "looks at" (singular subject) or "look at" (plural)."""
        return self.phrase if plural else self._with(_inflect(self.lemma, "VBZ"))

    def participle(self) -> str:
        """Passive participle: "looked at", "taken picture of"."""
        return self._with(_inflect(self.lemma, "VBN"))


def _inflect(lemma: str, tag: str) -> str:
    forms = getInflection(lemma, tag=tag)
    if not forms:
        raise ValueError(f"lemminflect has no {tag} form for verb {lemma!r}")
    return forms[0]


@dataclass(frozen=True)
class CleanPredicate:
    """A predicate after cleaning: its verb (None if it has none) and whether it was passive."""

    verb: Verb | None
    passive: bool
    tokens: tuple[str, ...]


def tokens_of(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, hyphens, apostrophes)."""
    return _WORD.findall(text.lower())


def clean_predicate(predicate: str, object_words: tuple[str, ...] = ()) -> CleanPredicate:
    """Clean a VG predicate: drop articles, possessives and trailing object words; detect passive.

    ``"holding a"`` -> hold; ``"is held by"`` -> hold, passive; ``"looking at the man"`` with
    object words ("man",) -> look at.
    """
    tokens = [t for t in tokens_of(predicate) if t not in ARTICLES and t not in POSSESSIVES]
    while tokens and tokens[-1] in object_words:
        tokens.pop()
    passive = len(tokens) >= 2 and tokens[-1] == "by"
    if passive:
        tokens = tokens[:-1]
    while tokens and tokens[0] in AUXILIARIES:
        tokens = tokens[1:]
    return CleanPredicate(_verb_of(tokens), passive, tuple(tokens))


def _verb_of(tokens: list[str]) -> Verb | None:
    if not tokens or tokens[0] in NOT_VERBS or "VERB" not in getAllLemmas(tokens[0]):
        return None
    return Verb(getLemma(tokens[0], upos="VERB")[0], tuple(tokens[1:]))


class TransitiveVerbs:
    """Membership test against the transitive-verb list (``builders/data/transitive_verbs.txt``)."""

    def __init__(self, path: Path) -> None:
        self.phrases = frozenset(read_word_list(path))

    def __contains__(self, verb: Verb) -> bool:
        return verb.phrase in self.phrases
