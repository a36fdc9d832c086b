"""Sentence templates (paper appendix C) with articles, agreement and passive participles."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lemminflect import getAllLemmas

from builders.construct.attributes import Attribute
from builders.construct.predicates import Verb, read_word_list, tokens_of

AN_EXCEPTIONS = ("uni", "use", "usu", "eu", "one", "once")
"""Vowel-initial words that take "a" ("a uniform", "a one-piece")."""


@dataclass(frozen=True)
class Person:
    """A person as it appears in a sentence: noun phrase and number."""

    phrase: str
    plural: bool = False

    @property
    def be(self) -> str:
        return "are" if self.plural else "is"


class Articles:
    """Chooses the article of an attribute's object: none, "the", "a" or "an"."""

    def __init__(self, path: Path) -> None:
        entries = read_word_list(path)
        self.definite = frozenset(e.split()[1] for e in entries if e.startswith("the "))
        self.none = frozenset(e for e in entries if not e.startswith("the "))

    def article(self, words: str, noun: str, plural: bool) -> str:
        """Article before ``words`` (attribute + noun) whose head noun is ``noun``."""
        head = tokens_of(noun)[-1] if tokens_of(noun) else noun
        if head in self.definite:
            return "the"
        if plural or head in self.none:
            return ""
        first = words.split()[0] if words.split() else ""
        vowel = first[:1] in "aeiou" and not first.startswith(AN_EXCEPTIONS)
        return "an" if vowel else "a"

    def complement(self, attribute: str | None, noun: str, plural: bool) -> str:
        """ "a blue t-shirt", "jeans", "the floor" """
        words = f"{attribute} {noun}" if attribute else noun
        article = self.article(words, noun, plural)
        return f"{article} {words}" if article else words


def noun_phrase(noun: str, attribute: str | None) -> str:
    """One-word attributes go before the noun ("standing man"), longer ones after it."""
    if not attribute:
        return noun
    return f"{attribute} {noun}" if len(attribute.split()) == 1 else f"{noun} {attribute}"


def active_passive(subject: Person, verb: Verb, obj: Person) -> list[str]:
    """TA, TP, FA, FP (release order True1, True2, False1, False2)."""
    s, o, participle = subject.phrase, obj.phrase, verb.participle()
    return [
        f"the {s} {verb.present(subject.plural)} the {o}",
        f"the {o} {obj.be} {participle} by the {s}",
        f"the {o} {verb.present(obj.plural)} the {s}",
        f"the {s} {subject.be} {participle} by the {o}",
    ]


def coordination(
    p1: Person, f1: tuple[Attribute, Attribute], p2: Person, f2: tuple[Attribute, Attribute]
) -> list[str]:
    """TP1, TP2, FP1, FP2: "the p1 f1p1 and f2p1", ..., "the p1 f1p1 and f1p2",
    "the p2 f2p1 and f2p2" (the majority pattern of the release)."""
    (a, b), (c, d) = f1, f2
    n1, n2 = p1.plural, p2.plural
    return [
        f"the {p1.phrase} {a.text(n1)} and {b.text(n1)}",
        f"the {p2.phrase} {c.text(n2)} and {d.text(n2)}",
        f"the {p1.phrase} {a.text(n1)} and {c.text(n1)}",
        f"the {p2.phrase} {b.text(n2)} and {d.text(n2)}",
    ]


def relative_clause(
    p1: Person, f1: tuple[Attribute, Attribute], p2: Person, f2: tuple[Attribute, Attribute]
) -> list[str]:
    """TP1, TP2, FP1, FP2: "the p1 who f1p1 f2p1", ..., "the p1 who f1p1 f2p2",
    "the p2 who f1p2 f2p1" (the relative clause stays, the main predicate is swapped)."""
    (a, b), (c, d) = f1, f2
    n1, n2 = p1.plural, p2.plural
    return [
        f"the {p1.phrase} who {a.text(n1)} {b.text(n1)}",
        f"the {p2.phrase} who {c.text(n2)} {d.text(n2)}",
        f"the {p1.phrase} who {a.text(n1)} {d.text(n1)}",
        f"the {p2.phrase} who {c.text(n2)} {b.text(n2)}",
    ]


def _lemma(word: str) -> str:
    lemmas = getAllLemmas(word)
    for pos in ("AUX", "VERB"):
        if pos in lemmas:
            return lemmas[pos][0]
    return word


def same_words(captions: list[str]) -> bool:
    """True when the two false sentences use the same words as the two true ones (verbs compared
    by lemma, so "watch"/"watches" and "is"/"are" count as the same word)."""
    true = Counter(_lemma(w) for c in captions[:2] for w in c.split())
    false = Counter(_lemma(w) for c in captions[2:] for w in c.split())
    return true == false
