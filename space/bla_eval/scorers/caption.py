"""The generative kind asked for the sentence's likelihood (``--score caption``, ``caption-pmi``):
log P(t | i), the sum of the log-probabilities of the sentence's tokens after the image, and
log P(t | no image) for the prior correction (``bla_metric.likelihood`` has the formulas).

With a chat template, the sentence is the assistant's answer to a user turn holding the image
and ``CAPTION_REQUEST``; without one, it follows the image directly. The prior is the same prompt
without the image (text only), or, for a model that cannot run without an image, with a blank
image (``describe()`` says which). Decoder-only models score on the prefix cache (the image and
the prompt once per image, each sentence a continuation); the plain path sends every (image,
sentence) pair through the whole model. The prior is computed once per distinct sentence.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from bla_metric.likelihood import pmi

from ..batching import map_batches
from ..protocols.templates import CAPTION_REQUEST
from ..queries import Query
from .base import Scored, regroup
from .prefix_cache import PLAIN, UnsupportedPrefix, common_prefix_length, sentence_log_prob
from .processor_inputs import PROBE_SIZE, model_inputs

TEXT_ONLY = "the prompt without the image"
BLANK = "the prompt with a blank grey image (the model runs on no prompt without an image)"


def heads(scorer: Any) -> tuple[str, str]:
    """The prompt before the sentence, with the image and without it."""
    if not scorer.chat:
        return "", ""
    request = {"type": "text", "text": CAPTION_REQUEST}
    turns = [[{"type": "image"}, request], [request]]
    return tuple(
        scorer.processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True
        )
        for content in turns
    )


def sentence_counts(scorer: Any, lead: str, head: str, texts: Sequence[str]) -> list[int]:
    """How many tokens of each ``lead + head + text`` are the text's (after the longest common
    prefix with the head's tokens)."""
    head_ids = scorer.tokenizer(lead + head)["input_ids"]
    counts = []
    for text in texts:
        ids = scorer.tokenizer(lead + head + text)["input_ids"]
        counts.append(len(ids) - common_prefix_length([ids, head_ids]))
    return counts


@torch.inference_mode()
def plain_log_probs(
    scorer: Any, images: Sequence[Any] | None, head: str, texts: Sequence[str]
) -> list[tuple[float, int]]:
    """(sum of log-probabilities, token count) of each text after ``head``, every (image,
    text) pair through the whole model (``images`` None: text only)."""
    if images is None:
        enc = scorer.tokenizer([head + t for t in texts], padding=True, return_tensors="pt")
        inputs = {
            k: v.to(scorer.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")
        }
        lead = ""
    else:
        inputs = model_inputs(
            scorer.processor,
            scorer.convention,
            images,
            [head + t for t in texts],
            accepted=scorer.accepted,
            device=scorer.device,
            dtype=scorer.dtype,
        )
        lead = scorer.convention.image_text
    logits = scorer.model(**inputs).logits
    counts = sentence_counts(scorer, lead, head, texts)
    ids = inputs["input_ids"]
    return [sentence_log_prob(logits[i], ids[i].tolist(), count) for i, count in enumerate(counts)]


def conditional(scorer: Any, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
    """log P(t | i) and token counts per text of each image, on the fastest exact path."""
    head = heads(scorer)[0]
    if scorer.fast is not None and scorer.caption_path != PLAIN:
        try:
            with scorer.fast.shared_features():
                return [
                    scorer.fast.continuation_log_probs(image, head, group, (b,)) if group else []
                    for b, (image, group) in enumerate(zip(images, texts, strict=True))
                ]
        except UnsupportedPrefix as err:
            scorer.caption_path = PLAIN
            scorer.caption_path_reason = f"fell back to the plain path: {err}"
    pairs = [(i, t) for i, group in enumerate(texts) for t in group]

    def run(batch: Sequence[tuple[int, str]]) -> list[tuple[float, int]]:
        return plain_log_probs(scorer, [images[i] for i, _ in batch], head, [t for _, t in batch])

    return regroup(map_batches(run, pairs, scorer.batch_size), texts)


def prior(scorer: Any, texts: Sequence[str]) -> dict[str, tuple[float, int]]:
    """log P(t | no image) of each distinct text, each computed once per run."""
    new = [t for t in dict.fromkeys(texts) if t not in scorer.priors]
    if new:
        head = heads(scorer)[1]
        if scorer.prior_input is None:
            try:
                plain_log_probs(scorer, None, head, new[:1])
                scorer.prior_input = TEXT_ONLY
            except Exception:  # noqa: BLE001 - an architecture that needs an image
                scorer.prior_input = BLANK
        if scorer.prior_input == TEXT_ONLY:
            values = map_batches(
                lambda b: plain_log_probs(scorer, None, head, b), new, scorer.batch_size
            )
        else:
            blank = Image.new("RGB", PROBE_SIZE, (128, 128, 128))
            with_image = heads(scorer)[0]
            values = map_batches(
                lambda b: plain_log_probs(scorer, [blank] * len(b), with_image, b),
                new,
                scorer.batch_size,
            )
        scorer.priors.update(zip(new, values, strict=True))
    return {t: scorer.priors[t] for t in texts}


def terms(scorer: Any, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list[list[dict]]:
    """Per text of each image: ``log_p_image``, ``tokens`` and, for ``caption-pmi``,
    ``log_p_prior``."""
    start = time.perf_counter()
    values = conditional(scorer, images, texts)
    scorer.timings["caption"] = scorer.timings.get("caption", 0.0) + time.perf_counter() - start
    out = [[{"log_p_image": s, "tokens": n} for s, n in row] for row in values]
    if scorer.score_mode == "caption-pmi":
        start = time.perf_counter()
        priors = prior(scorer, [t for group in texts for t in group])
        scorer.timings["prior"] = scorer.timings.get("prior", 0.0) + time.perf_counter() - start
        with_priors(out, texts, priors)
    return out


def with_priors(
    found: list[list[dict]], texts: Sequence[Sequence[str]], priors: dict[str, tuple[float, int]]
) -> None:
    """Put each text's ``log_p_prior`` beside its other terms (``found``: per text of each
    image, as :func:`terms` gives them)."""
    for row, group in zip(found, texts, strict=True):
        for cell, text in zip(row, group, strict=True):
            cell["log_p_prior"] = priors[text][0]


def score(scorer: Any, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
    """The run's score of each (image, sentence): log P(t | i), or its PMI with the run's
    alpha; each sentence's terms beside it."""
    texts = [[q.sentence for q in group] for group in queries]
    found = scorer.caption_terms(images, texts)
    if scorer.score_mode == "caption-pmi":
        if scorer.alpha is None:
            raise ValueError("caption-pmi: no alpha (give --pmi-alpha or a learning split)")
        for row in found:
            for cell in row:
                cell["pmi_alpha"] = scorer.alpha
        scores = [[pmi(c["log_p_image"], c["log_p_prior"], scorer.alpha) for c in r] for r in found]
    else:
        scores = [[c["log_p_image"] for c in row] for row in found]
    return Scored(scores, None, found)


def describe(scorer: Any) -> dict[str, Any]:
    """What results.json records of a run asked for the sentence's likelihood (a kind that
    keeps no ``convention`` or ``caption_path`` records without them)."""
    with_image = "the sentence as the assistant's answer to a user turn with the image and "
    record = {
        "score": scorer.score_mode,
        "caption_prompt": with_image + repr(CAPTION_REQUEST)
        if scorer.chat
        else "the sentence right after the image",
        "ranks_by": "log P(t | i), summed over the sentence's tokens (the mean per token is "
        "log_p_image / tokens in scores.jsonl)",
        "chat_template": scorer.chat,
        "processor_inputs": scorer.convention.record() if hasattr(scorer, "convention") else None,
        "forward_path": getattr(scorer, "caption_path", None),
        "forward_path_reason": getattr(scorer, "caption_path_reason", None),
        "binary_view": "top-k",
        "binary_view_rule": "the ranking view's top two answered true (log-likelihoods have "
        "no threshold)",
    }
    record = {k: v for k, v in record.items() if v is not None}
    if scorer.score_mode == "caption-pmi":
        record["ranks_by"] = "log P(t | i) - alpha * log P(t | no image)"
        record["prior_input"] = scorer.prior_input or TEXT_ONLY
        record["pmi_alpha"] = scorer.alpha
        record["pmi_alpha_source"] = scorer.alpha_source
    return record
