"""Filters of the construction: object size, box overlap, reasoning language, body parts."""

from __future__ import annotations

from pathlib import Path

from builders.construct.predicates import read_word_list, tokens_of
from builders.construct.vg import VGImage, VGObject

NUMBER_WORDS = frozenset(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    + tuple(str(n) for n in range(1, 11))
)


def area_ratio(obj: VGObject, image: VGImage) -> float:
    """Box area over image area (0 for an image without a size)."""
    return obj.area / image.area if image.area > 0 else 0.0


def box_overlap(a: VGObject, b: VGObject) -> float:
    """Intersection area over the smaller box's area (1.0 when one box lies inside the other)."""
    width = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
    height = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min(a.area, b.area)
    return width * height / smaller if smaller > 0 else 1.0


class ReasoningLanguage:
    """Finds positional words and numbers one to ten (paper appendix B) in annotation text."""

    def __init__(self, path: Path) -> None:
        words = read_word_list(path)
        self.phrases = [tuple(w.split()) for w in words if " " in w]
        self.words = frozenset(w for w in words if " " not in w)

    def reason(self, text: str) -> str | None:
        """``"number"`` or ``"positional word"`` when ``text`` holds one, else None."""
        tokens = tokens_of(text)
        if any(t in NUMBER_WORDS for t in tokens):
            return "number"
        if any(t in self.words for t in tokens):
            return "positional word"
        for phrase in self.phrases:
            n = len(phrase)
            if any(tuple(tokens[i : i + n]) == phrase for i in range(len(tokens) - n + 1)):
                return "positional word"
        return None


class BodyParts:
    """True for object names whose last word is a body part ("legs", "a lip")."""

    def __init__(self, path: Path) -> None:
        self.words = frozenset(read_word_list(path))

    def __contains__(self, name: str) -> bool:
        tokens = tokens_of(name)
        return bool(tokens) and tokens[-1] in self.words
