"""Sentences cut to a text encoder's length limit: each distinct one counted, the first announced
once on stderr, the count recorded in ``results.json`` (``protocol.truncated_sentences``, with
``text_max_length``).

The kinds that cut a sentence to a length (the contrastive text towers, transformers' with
``truncation=True`` and open_clip's at their context length; the image-text matching heads)
count through :class:`Truncation`; the generative and text kinds never truncate a prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..cli_common import say

LONGEST = 10**6
"""Tokenizers without a length limit say one above this (transformers' very large default)."""


def text_max_length(tokenizer: Any) -> int | None:
    """The tokenizer's length limit (None: it has none)."""
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < LONGEST else None


Lengths = Callable[[Sequence[str]], Sequence[int]]
"""The number of tokens of each text, uncut (special tokens included)."""


def tokenizer_lengths(tokenizer: Any) -> Lengths:
    """:data:`Lengths` of a transformers tokenizer."""
    return lambda texts: [len(ids) for ids in tokenizer(list(texts), truncation=False)["input_ids"]]


class Truncation:
    """The distinct sentences longer than ``max_length`` tokens (default: the transformers
    ``tokenizer``'s own limit), which encoding cuts to it; ``lengths`` counts a text's tokens
    (default: ``tokenizer`` uncut)."""

    def __init__(
        self, tokenizer: Any, max_length: int | None = None, lengths: Lengths | None = None
    ) -> None:
        self.max_length = max_length or text_max_length(tokenizer)
        self.lengths = lengths or tokenizer_lengths(tokenizer)
        self.cut: set[str] = set()

    def count(self, texts: Sequence[str]) -> None:
        """Keep those of ``texts`` that are cut; the first one cut is announced."""
        if not self.max_length:
            return
        lengths = self.lengths(texts)
        cut = {t for t, n in zip(texts, lengths, strict=True) if n > self.max_length}
        if cut and not self.cut:
            say(
                f"note: sentences longer than the model's {self.max_length} text tokens are "
                "cut to them (results.json: protocol.truncated_sentences counts them)"
            )
        self.cut |= cut

    def describe(self) -> dict[str, Any]:
        """What ``results.json`` records: the limit and how many distinct sentences it cut."""
        return {"text_max_length": self.max_length, "truncated_sentences": len(self.cut)}
