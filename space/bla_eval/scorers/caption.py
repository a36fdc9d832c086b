"""The generative kind asked for the sentence's likelihood (``--score caption``, ``caption-pmi``):
log P(t | i), the sum of the log-probabilities of the sentence's tokens after the image, and
log P(t | no image) for the prior correction (``bla_metric.likelihood`` has the formulas).

Which tokens are the sentence's: with a chat template, those the template gives an assistant
message holding the sentence, after a user turn holding the image and ``CAPTION_REQUEST``
(rendered with the assistant's message continued, ``continue_final_message``, as a vLLM server
renders it: LLaVA-1.5's and SmolVLM's templates put a space before the answer, so its first token
carries the space); without one, the sentence follows the image directly; a prefix-LM's processor
(one that takes a ``suffix``: PaliGemma) gets it as the causal suffix after its bidirectional
prompt; an encoder-decoder's encoder reads the image and the prompt before the sentence, and its
decoder the sentence as its target (``decoder_targets``). Special tokens after the sentence (a
tokenizer's ``[SEP]`` or ``</s>``, the suffix's EOS, a processor's separator) are not counted. The
prior is the same prompt without the image (text only), or, for a model that cannot run without
an image, with a blank image (``describe()`` says which). Decoder-only models score on the prefix
cache (the image and the prompt once per image, each sentence a continuation), BLIP-2 Flan-T5 on
its image features (once per image); the plain path sends every (image, sentence) pair through
the whole model, padded on the right, so that no padding sits before a token the sentence is
predicted from. The prior is computed once per distinct sentence.
"""

from __future__ import annotations

import inspect
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
from .decoder_targets import DECODER_INPUTS, decoder_targets
from .prefix_cache import (
    PLAIN,
    Span,
    UnsupportedPrefix,
    own_specials,
    sentence_log_prob,
    sentence_span,
    trailing_specials,
)
from .processor_inputs import PROBE_SIZE, forward_inputs

TEXT_ONLY = "the prompt without the image"
BLANK = "the prompt with a blank grey image (the model runs on no prompt without an image)"
TEXT_INPUTS = frozenset({"input_ids", "attention_mask"})
"""What a text-only forward takes of the tokenizer's outputs."""
NOT_PREDICTED = -100
"""The label of a token a processor's ``labels`` does not ask the model to predict."""


def rendered(scorer: Any, text: str, image: bool) -> str:
    """The chat template's rendering of a user turn (the image, if ``image``, and
    ``CAPTION_REQUEST``) and an assistant message holding ``text``, continued rather than
    closed (``continue_final_message``), as a vLLM server renders it."""
    request = {"type": "text", "text": CAPTION_REQUEST}
    user = {"role": "user", "content": [{"type": "image"}, request] if image else [request]}
    try:  # the content as a string, as an endpoint sends it
        answer = {"role": "assistant", "content": text}
        return scorer.processor.apply_chat_template([user, answer], continue_final_message=True)
    except ValueError:  # a template that reads only content parts: the text is missing
        answer = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        return scorer.processor.apply_chat_template([user, answer], continue_final_message=True)


def head_of(scorer: Any, texts: Sequence[str], image: bool) -> str:
    """The prompt before the sentence (with the image or without it): the template's rendering
    of the assistant message holding each text, up to the text; '' without a chat template. A
    template that changes a text, or renders different prompts before different texts, is
    refused (ValueError)."""
    if not scorer.chat:
        return ""
    found = set()
    for text in dict.fromkeys(texts):
        prompt = rendered(scorer, text, image)
        if not prompt.endswith(text):
            raise ValueError(
                f"the chat template does not end the assistant's message {text!r} "
                f"with the sentence: {prompt[-len(text) - 20 :]!r}"
            )
        found.add(prompt[: len(prompt) - len(text)])
    if len(found) > 1:
        raise ValueError("the chat template renders different prompts before different sentences")
    return found.pop()


def heads(scorer: Any, texts: Sequence[str]) -> tuple[str, str]:
    """The prompt before the sentences ``texts``, with the image and without it."""
    return head_of(scorer, texts, True), head_of(scorer, texts, False)


def takes_suffix(processor: Any) -> bool:
    """The processor takes the text to predict as ``suffix`` (a prefix-LM, e.g. PaliGemma: the
    prompt attends bidirectionally, the suffix causally)."""
    if processor is None:
        return False
    return "suffix" in inspect.signature(type(processor).__call__).parameters


def sentence_spans(scorer: Any, lead: str, head: str, texts: Sequence[str]) -> list[Span]:
    """The span of each text in the tokenizer's ids of ``lead + head + text``."""
    head_ids = scorer.tokenizer(lead + head)["input_ids"]
    rows = scorer.tokenizer([lead + head + t for t in texts])["input_ids"]
    owns = own_specials(scorer.tokenizer, texts)
    return [
        sentence_span(scorer.tokenizer, row, head_ids, own)
        for row, own in zip(rows, owns, strict=True)
    ]


def suffix_spans(
    tokenizer: Any, labels: torch.Tensor, mask: torch.Tensor, texts: Sequence[str]
) -> list[Span]:
    """The span of each suffix ``texts[i]``: the tokens the processor labels (the ``suffix``),
    less the special tokens it appends (EOS), counted back from the end of the row's tokens."""
    spans = []
    owns = own_specials(tokenizer, texts)
    rows = zip(labels.tolist(), mask.sum(-1).tolist(), owns, strict=True)
    for row, real, own in rows:
        marked = [k for k, label in enumerate(row) if label != NOT_PREDICTED]
        if not marked:
            raise ValueError("the processor labels no token of the suffix")
        tail = trailing_specials(tokenizer, row[marked[0] : marked[-1] + 1], own)
        spans.append(Span(len(marked) - tail, real - marked[-1] - 1 + tail))
    return spans


def right_padded(mask: Sequence[int]) -> bool:
    """No padding before a token of the row (padding, if any, after its last token)."""
    return all(a >= b for a, b in zip(mask, mask[1:], strict=False))


def encoded(
    scorer: Any, images: Sequence[Any] | None, head: str, texts: Sequence[str]
) -> tuple[Any, list[Span]]:
    """The processor's (or, without images, the tokenizer's) inputs of each text after
    ``head``, padded on the right, and the span of each text in its row."""
    if takes_suffix(scorer.processor):
        pictures = None if images is None else scorer.convention.images(images)
        lead = scorer.convention.image_text if images is not None else ""
        enc = scorer.processor(
            images=pictures,
            text=[lead + head] * len(texts),
            suffix=list(texts),
            padding=True,
            padding_side="right",
            return_tensors="pt",
        )
        return enc, suffix_spans(scorer.tokenizer, enc["labels"], enc["attention_mask"], texts)
    if images is None:
        enc = scorer.tokenizer(
            [head + t for t in texts], padding=True, padding_side="right", return_tensors="pt"
        )
        return enc, sentence_spans(scorer, "", head, texts)
    lead = scorer.convention.image_text
    enc = scorer.processor(
        images=scorer.convention.images(images),
        text=[lead + head + t for t in texts],
        padding=True,
        padding_side="right",
        return_tensors="pt",
    )
    return enc, sentence_spans(scorer, lead, head, texts)


def encoder_inputs(
    scorer: Any, images: Sequence[Any] | None, head: str, n: int
) -> tuple[dict[str, Any], str]:
    """An encoder-decoder's encoder inputs for ``n`` texts after ``head`` (the processor's for
    ``images``, the tokenizer's without them), and the head of its decoder: '', or ``head``
    where the processor sends its text to the decoder (Pix2Struct)."""
    if images is None:
        enc = scorer.tokenizer([head] * n, padding=True, padding_side="right", return_tensors="pt")
        if enc["input_ids"].shape[-1] == 0:
            raise ValueError("without the image, the encoder reads no token")
        return {k: enc[k] for k in TEXT_INPUTS}, ""
    enc = scorer.processor(
        images=scorer.convention.images(images),
        text=[scorer.convention.image_text + head] * n,
        padding=True,
        padding_side="right",
        return_tensors="pt",
    )
    decoder_head = head if "decoder_input_ids" in enc else ""
    return {k: v for k, v in enc.items() if k not in DECODER_INPUTS}, decoder_head


@torch.inference_mode()
def decoder_log_probs(
    scorer: Any, images: Sequence[Any] | None, head: str, texts: Sequence[str]
) -> list[tuple[float, int]]:
    """:func:`plain_log_probs` of an encoder-decoder: the encoder reads each image (or none)
    and ``head``, the decoder each text as its target (``decoder_targets``)."""
    enc, decoder_head = encoder_inputs(scorer, images, head, len(texts))
    targets = decoder_targets(scorer.tokenizer, scorer.decoder_start, decoder_head, texts)
    accepted = TEXT_INPUTS if images is None else scorer.accepted
    inputs = forward_inputs(enc, accepted=accepted, device=scorer.device, dtype=scorer.dtype)
    inputs.update(targets.inputs(scorer.accepted, scorer.device))
    return targets.log_probs(scorer.model(**inputs).logits)


@torch.inference_mode()
def plain_log_probs(
    scorer: Any, images: Sequence[Any] | None, head: str, texts: Sequence[str]
) -> list[tuple[float, int]]:
    """(sum of log-probabilities, token count) of each text after ``head``, every (image,
    text) pair through the whole model (``images`` None: text only). Rows are padded on the
    right, so every token sees only its own sequence's tokens before it; a row the processor
    pads elsewhere is run again alone."""
    if getattr(scorer, "encoder_decoder", False):
        return decoder_log_probs(scorer, images, head, texts)
    enc, spans = encoded(scorer, images, head, texts)
    text_only = images is None and not takes_suffix(scorer.processor)
    accepted = TEXT_INPUTS if text_only else scorer.accepted
    inputs = forward_inputs(enc, accepted=accepted, device=scorer.device, dtype=scorer.dtype)
    logits = scorer.model(**inputs).logits
    ids, mask = enc["input_ids"], enc["attention_mask"]
    # the logits' last positions are the ids' (GIT puts its image positions before them)
    logits = logits[:, logits.shape[1] - ids.shape[1] :]
    out = []
    for i, span in enumerate(spans):
        row = mask[i].tolist()
        if not right_padded(row):
            one = None if images is None else images[i : i + 1]
            out += plain_log_probs(scorer, one, head, texts[i : i + 1])
            continue
        real = sum(row)
        own = ids[i, :real].tolist()
        count, tail, _ = span.within(own)
        out.append(sentence_log_prob(logits[i, :real], own, count, tail))
    return out


def fast_continuations(
    scorer: Any, image: Any, head: str, texts: Sequence[str], key: tuple
) -> list[tuple[float, int]]:
    """log P(t | i) of each text about ``image`` on the prefix cache (``key``: the image's
    name among the call's images)."""
    return scorer.fast.continuation_log_probs(image, head, texts, key)


def fast_decoder_log_probs(
    scorer: Any, image: Any, head: str, texts: Sequence[str], key: tuple
) -> list[tuple[float, int]]:
    """log P(t | i) of each text about ``image`` from an encoder-decoder whose image features
    are computed once (``key``: the image's name among the call's images)."""

    def run(batch: Sequence[str]) -> list[tuple[float, int]]:
        targets = decoder_targets(scorer.tokenizer, scorer.decoder_start, "", batch)
        decoder = targets.inputs(scorer.accepted, scorer.device)
        return targets.log_probs(scorer.fast.decoder_logits(image, head, decoder, key))

    return map_batches(run, list(texts), scorer.batch_size)


def conditional(scorer: Any, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
    """log P(t | i) and token counts per text of each image, on the fastest exact path."""
    head = head_of(scorer, [t for group in texts for t in group], image=True)
    if scorer.fast is not None and scorer.caption_path != PLAIN:
        continued = fast_decoder_log_probs if scorer.encoder_decoder else fast_continuations
        try:
            with scorer.fast.shared_features():
                return [
                    continued(scorer, image, head, group, (b,)) if group else []
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
        head = head_of(scorer, new, image=False)
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
            with_image = head_of(scorer, new, image=True)
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
    encoder_decoder = getattr(scorer, "encoder_decoder", False)
    if encoder_decoder:
        prompt = "the sentence as the decoder's target after its start token; the encoder reads "
        prompt += "the image"
        prompt += f" and a user turn with {CAPTION_REQUEST!r}" if scorer.chat else ""
    elif scorer.chat:
        prompt = "the sentence as the assistant's answer (continued) to a user turn with the "
        prompt += f"image and {CAPTION_REQUEST!r}"
    elif takes_suffix(getattr(scorer, "processor", None)):
        prompt = "the sentence as the causal suffix after the image (prefix-LM)"
    else:
        prompt = "the sentence right after the image"
    record = {
        "score": scorer.score_mode,
        "caption_prompt": prompt,
        "ranks_by": "log P(t | i), summed over the sentence's tokens (the mean per token is "
        "log_p_image / tokens in scores.jsonl)",
        "chat_template": scorer.chat,
        "encoder_decoder": encoder_decoder or None,
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
