"""A sentence's log-probability under a causal language model: the one of the project.

The ``text`` model kind (:mod:`bla_eval.scorers.text`) scores a sentence with
:func:`mean_log_probs`, and the grammar filter of ``builders construct`` computes its SLOR with it
(the model's unigram estimate as ``baseline``). Needs torch; the model and tokenizer are any
``transformers`` causal LM and its tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


def prefix_token(tokenizer: Any) -> int | None:
    """The token put before each text: the tokenizer's BOS, else its EOS (None: neither)."""
    bos = tokenizer.bos_token_id
    return tokenizer.eos_token_id if bos is None else bos


def encode_texts(tokenizer: Any, texts: Sequence[str], prefix_id: int | None) -> list[list[int]]:
    """Each text's token ids without special tokens, ``prefix_id`` (when not None) first."""
    encoded = [tokenizer.encode(t, add_special_tokens=False) for t in texts]
    return encoded if prefix_id is None else [[prefix_id, *ids] for ids in encoded]


@torch.inference_mode()
def token_log_probs(
    model: Any, tokenizer: Any, texts: Sequence[str], prefix_id: int | None, device: Any
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-token log-probabilities of ``texts`` under a causal LM, one right-padded batch.

    Each text is tokenised without special tokens, ``prefix_id`` (when not None) is put before
    it, and token ``t`` is scored given the tokens before it. Returns ``(log_probs, targets,
    valid)``, each of shape (texts, longest - 1): the log-probability of each target token, the
    target token ids, and 1.0 where a target is a real token (0.0 on padding).
    """
    encoded = encode_texts(tokenizer, texts, prefix_id)
    width = max(len(ids) for ids in encoded)
    input_ids = torch.zeros(len(encoded), width, dtype=torch.long)
    mask = torch.zeros(len(encoded), width, dtype=torch.long)
    for row, ids in enumerate(encoded):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
    input_ids, mask = input_ids.to(device), mask.to(device)
    logits = model(input_ids=input_ids, attention_mask=mask).logits[:, :-1].float()
    targets = input_ids[:, 1:]
    token_lp = logits.log_softmax(-1).gather(-1, targets[..., None])[..., 0]
    return token_lp, targets, mask[:, 1:].float()


def mean_log_probs(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    prefix_id: int | None,
    device: Any,
    baseline: torch.Tensor | None = None,
) -> list[float]:
    """Mean token log-probability of each text (see :func:`token_log_probs`).

    ``baseline`` (a log-probability per vocabulary entry) is subtracted from each token first:
    with the model's own unigram estimate this is SLOR, the grammar filter of
    ``builders construct``.
    """
    token_lp, targets, valid = token_log_probs(model, tokenizer, texts, prefix_id, device)
    if baseline is not None:
        token_lp = token_lp - baseline[targets]
    return ((token_lp * valid).sum(1) / valid.sum(1).clamp(min=1)).cpu().tolist()


@torch.inference_mode()
def next_token_logits(
    model: Any, tokenizer: Any, texts: Sequence[str], prefix_id: int | None, device: Any
) -> torch.Tensor:
    """Logits of the token after each text (float32, (texts, vocabulary)): one left-padded
    batch, ``prefix_id`` (when not None) before each text, as in :func:`token_log_probs`."""
    encoded = encode_texts(tokenizer, texts, prefix_id)
    width = max(len(ids) for ids in encoded)
    input_ids = torch.zeros(len(encoded), width, dtype=torch.long)
    mask = torch.zeros(len(encoded), width, dtype=torch.long)
    for row, ids in enumerate(encoded):
        input_ids[row, width - len(ids) :] = torch.tensor(ids)
        mask[row, width - len(ids) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    input_ids, mask, positions = input_ids.to(device), mask.to(device), positions.to(device)
    output = model(input_ids=input_ids, attention_mask=mask, position_ids=positions)
    return output.logits[:, -1].float()
