"""Sentences cut to a text encoder's length limit: each distinct one counted, the first announced
once on stderr, the count recorded in ``results.json`` (``protocol.truncated_sentences``, with
``text_max_length``).

The kinds that encode a sentence with ``truncation=True`` (the contrastive text towers, the
image-text matching heads) count through :class:`Truncation`; the generative and text kinds
never truncate a prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cli_common import say

LONGEST = 10**6
"""Tokenizers without a length limit say one above this (transformers' very large default)."""


def text_max_length(tokenizer: Any) -> int | None:
    """The tokenizer's length limit (None: it has none)."""
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < LONGEST else None


class Truncation:
    """The distinct sentences longer than ``max_length`` tokens of ``tokenizer`` (special tokens
    included; default: the tokenizer's own limit), which ``truncation=True`` cuts to it."""

    def __init__(self, tokenizer: Any, max_length: int | None = None) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length or text_max_length(tokenizer)
        self.cut: set[str] = set()

    def count(self, texts: Sequence[str]) -> None:
        """Keep those of ``texts`` that are cut; the first one cut is announced."""
        if not self.max_length:
            return
        lengths = self.tokenizer(list(texts), truncation=False)["input_ids"]
        cut = {t for t, ids in zip(texts, lengths, strict=True) if len(ids) > self.max_length}
        if cut and not self.cut:
            say(
                f"note: sentences longer than the model's {self.max_length} text tokens are "
                "cut to them (results.json: protocol.truncated_sentences counts them)"
            )
        self.cut |= cut

    def describe(self) -> dict[str, Any]:
        """What ``results.json`` records: the limit and how many distinct sentences it cut."""
        return {"text_max_length": self.max_length, "truncated_sentences": len(self.cut)}
