"""What an encoder-decoder's decoder reads (BLIP-2 Flan-T5, Florence-2, Pix2Struct): the sentence
as its target, for ``--score caption`` and ``caption-pmi``; for the first answer token, its start
token, and the prompt where the processor sends the prompt there (:func:`decoder_prompts`).

The encoder reads the image and the prompt before the sentence; the decoder is fed its start
token and the tokenizer's ids of the sentence (teacher forcing: the ``decoder_input_ids``
transformers makes from ``labels`` by shifting them right). The sentence's tokens are counted;
the decoder start is not, nor are the special tokens the tokenizer puts before the sentence
(BART's ``<s>``: the decoder reads it, as a decoder-only model reads its BOS) or after it (T5's
and BART's ``</s>``, as trailing specials are left out for decoder-only models; a sentence's own
trailing ``[UNK]`` is counted). Rows are padded
on the right, with the decoder's attention mask, so no padding comes before a token of a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .prefix_cache import Span, own_specials, padded, sentence_log_prob, sentence_span

DECODER_INPUTS = frozenset({"decoder_input_ids", "decoder_attention_mask"})
"""A processor's outputs for the decoder (Pix2Struct's processor sends its text there)."""


@dataclass(frozen=True)
class DecoderTargets:
    """Decoder rows of a batch of texts: ``rows[i]`` = the decoder start and the ids of text
    ``i`` (after the decoder's ``head``), ``spans[i]`` = where the text's tokens are in it."""

    rows: list[list[int]]
    spans: list[Span]
    pad: int

    def inputs(self, accepted: frozenset[str] | None, device: torch.device) -> dict[str, Any]:
        """The rows as decoder inputs (:func:`padded_decoder_inputs`)."""
        return padded_decoder_inputs(self.rows, self.pad, accepted, device)

    def log_probs(self, logits: torch.Tensor) -> list[tuple[float, int]]:
        """(sum of log-probabilities, token count) of each text, from the decoder's ``logits``
        at every position of :meth:`inputs` (float32)."""
        return [
            sentence_log_prob(logits[i, : len(row)], row, span.count, span.tail)
            for i, (row, span) in enumerate(zip(self.rows, self.spans, strict=True))
        ]


def decoder_targets(tokenizer: Any, start: int, head: str, texts: Sequence[str]) -> DecoderTargets:
    """The decoder rows of ``texts``: ``start``, then the tokenizer's ids of ``head + text``
    (``head``: '' unless a processor puts the prompt into the decoder), with the special tokens
    it adds, as a ``labels`` row has them."""
    head_ids = tokenizer(head)["input_ids"]
    rows = [[start, *row] for row in tokenizer([head + t for t in texts])["input_ids"]]
    owns = own_specials(tokenizer, texts)
    spans = [
        sentence_span(tokenizer, row, [start, *head_ids], own)
        for row, own in zip(rows, owns, strict=True)
    ]
    pad = tokenizer.pad_token_id
    return DecoderTargets(rows, spans, pad if pad is not None else start)


def padded_decoder_inputs(
    rows: Sequence[Sequence[int]], pad: int, accepted: frozenset[str] | None, device: torch.device
) -> dict[str, Any]:
    """Decoder rows as ``decoder_input_ids``, padded on the right with ``pad``, and, where the
    forward takes it (``accepted``, None: any), their ``decoder_attention_mask``."""
    ids, mask = padded(rows, pad, left=False)
    out = {"decoder_input_ids": ids.to(device)}
    if accepted is None or "decoder_attention_mask" in accepted:
        out["decoder_attention_mask"] = mask.to(device)
    return out


def decoder_prompts(
    inputs: dict[str, Any],
    n: int,
    start: int,
    pad: int,
    accepted: frozenset[str] | None,
    device: torch.device,
) -> torch.Tensor | None:
    """Put the decoder's inputs for reading the first answer token into ``inputs`` (a
    processor's for ``n`` prompts): the decoder ``start`` token alone; where the processor sends
    the prompt to the decoder (Pix2Struct), ``start`` and each prompt's tokens, padded on the
    right. Returns each row's last position (None: the start token's, the only one)."""
    prompt = inputs.pop("decoder_input_ids", None)
    mask = inputs.pop("decoder_attention_mask", None)
    if prompt is None or prompt.shape[-1] == 0:
        inputs["decoder_input_ids"] = torch.full((n, 1), start, dtype=torch.long, device=device)
        return None
    mask = torch.ones_like(prompt) if mask is None else mask
    rows = [[start, *p[m.bool()].tolist()] for p, m in zip(prompt, mask, strict=True)]
    inputs.update(padded_decoder_inputs(rows, pad, accepted, device))
    return torch.tensor([len(r) - 1 for r in rows], device=device)
