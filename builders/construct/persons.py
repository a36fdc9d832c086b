"""Which Visual Genome objects are persons: WordNet synsets in lexicographer file noun.person (18).

VG labels objects with NLTK-style synset names (``man.n.01``: lemma, part of speech, sense number).
The sense number counts the lemma's synsets in ``index.noun`` order, whose offsets point into
``data.noun``, where the second field of each line is the lexicographer file number.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


class WordNetError(FileNotFoundError):
    """WordNet's database files are missing (install Debian's ``wordnet-base``)."""


@lru_cache(maxsize=4)
def lexfile_synsets(wordnet_dir: Path, lexfile: int) -> frozenset[str]:
    """All noun synset names (``lemma.n.NN``) whose synset is in lexicographer file ``lexfile``."""
    index, data = Path(wordnet_dir) / "index.noun", Path(wordnet_dir) / "data.noun"
    if not index.is_file() or not data.is_file():
        raise WordNetError(f"WordNet noun files not in {wordnet_dir} (apt install wordnet-base)")
    in_file = _offsets_in_lexfile(data, lexfile)
    names = set()
    with open(index, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(" "):
                continue
            fields = line.split()
            lemma, synset_count = fields[0], int(fields[2])
            for sense, offset in enumerate(fields[-synset_count:], start=1):
                if int(offset) in in_file:
                    names.add(f"{lemma}.n.{sense:02d}")
    return frozenset(names)


def _offsets_in_lexfile(data: Path, lexfile: int) -> set[int]:
    offsets = set()
    with open(data, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(" "):
                continue
            offset, lex, _rest = line.split(" ", 2)
            if int(lex) == lexfile:
                offsets.add(int(offset))
    return offsets


class PersonDetector:
    """``is_person(synsets)``: true when any synset is a noun.person synset."""

    def __init__(self, wordnet_dir: Path, lexfile: int = 18, extra: tuple[str, ...] = ()) -> None:
        self.synsets = lexfile_synsets(Path(wordnet_dir), lexfile) | set(extra)

    def is_person(self, synsets: list[str]) -> bool:
        return any(s.lower() in self.synsets for s in synsets)
