"""The generative kind under the BLA authors' protocols (``--protocol paper``, ``paper-icl-*``):
an answer generated with the model's default settings and classified by the authors' rules, in
place of P(yes) (``bla_eval.paper_protocol`` has the strings and rules)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch

from bla_metric.answers import answer_score

from .. import paper_protocol
from ..batching import map_batches
from .base import Query, Scored, regroup


def prompt(scorer: Any, query: Query) -> str:
    """The authors' prompt for ``query``, inside the chat template where the processor has one."""
    if not scorer.chat:
        return paper_protocol.prompt(query.sentence, query.demonstrations)
    messages = paper_protocol.chat_messages(query.sentence, query.demonstrations)
    return scorer.processor.apply_chat_template(messages, add_generation_prompt=True)


@torch.inference_mode()
def generate(scorer: Any, images: Sequence[Any], queries: Sequence[Query]) -> list[str]:
    """``model.generate(**inputs)`` per (image, query), decoded with special tokens skipped; for
    decoder-only models the prompt tokens at the start of the output are left out."""
    image_arg = [[im] for im in images] if scorer.nested else list(images)
    inputs = scorer.processor(
        images=image_arg,
        text=[prompt(scorer, q) for q in queries],
        padding=True,
        return_tensors="pt",
    ).to(scorer.device)
    if "pixel_values" in inputs:
        inputs["pixel_values"] = inputs["pixel_values"].to(scorer.dtype)
    out = scorer.model.generate(**inputs)
    if not scorer.encoder_decoder:
        out = out[:, inputs["input_ids"].shape[1] :]
    return scorer.processor.batch_decode(out, skip_special_tokens=True)


def score(scorer: Any, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
    """Generated answers (raw text) and the scores they stand for, ``batch_size`` pairs at a
    time (halved on out-of-memory)."""
    pairs = [(i, q) for i, group in enumerate(queries) for q in group]

    def run(batch: Sequence[tuple[int, Query]]) -> list[str]:
        start = time.perf_counter()
        texts = generate(scorer, [images[i] for i, _ in batch], [q for _, q in batch])
        scorer.timings["generate"] = scorer.timings.get("generate", 0.0) + (
            time.perf_counter() - start
        )
        return texts

    texts = map_batches(run, pairs, scorer.batch_size)
    scores = [answer_score(t) for t in texts]
    return Scored(regroup(scores, queries), regroup(texts, queries))


def describe(scorer: Any) -> dict[str, Any]:
    """What results.json records of a run under the authors' protocols."""
    return {
        "prompt": paper_protocol.zero_shot_prompt("{sentence}"),
        "in_context_turn": paper_protocol.TEMPLATE.format(
            paper_protocol.ICL_QUESTION.format("{sentence}"), "{answer}"
        ),
        "chat_template": scorer.chat,
        "encoder_decoder": scorer.encoder_decoder,
        "forward_path": "generate",
        **({"device_map": scorer.device_map} if scorer.device_map else {}),
        "score": "generated answer by the authors' rules: yes 1.0, no 0.0, unparsed 0.5",
        "generation": paper_protocol.generation_record(scorer.model),
        "metrics": "binary view over parsed answers only (bla_metric.paper, the authors' "
        "get_cls_statistics); unparsed answers counted per task",
    }
