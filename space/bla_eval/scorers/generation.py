"""The generative kind under the BLA authors' protocols (``--protocol paper``, ``paper-icl-*``):
an answer generated with the model's default settings and classified by the authors' rules, in
place of P(yes) (``bla_eval.protocols.authors`` has the rules, ``bla_eval.protocols.templates``
the strings)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch

from bla_metric.answers import answer_score

from ..batching import map_batches
from ..protocols.authors import generation_record
from ..queries import Query
from .base import Scored, regroup


@torch.inference_mode()
def generate(scorer: Any, images: Sequence[Any], queries: Sequence[Query]) -> list[str]:
    """``model.generate(**inputs)`` per (image, query), decoded with special tokens skipped; for
    decoder-only models the prompt tokens at the start of the output are left out."""
    inputs = scorer.inputs(images, queries)
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
    template = scorer.template
    return {
        "prompt": template.ask("{sentence}"),
        "in_context_turn": template.turn.format(
            question=template.ask("{sentence}", in_context=True), answer="{answer}"
        ),
        "chat_template": scorer.chat,
        "encoder_decoder": scorer.encoder_decoder,
        "forward_path": "generate",
        **({"device_map": scorer.device_map} if scorer.device_map else {}),
        "score": "generated answer by the authors' rules: yes 1.0, no 0.0, unparsed 0.5",
        "generation": generation_record(scorer.model),
        "metrics": "binary view over parsed answers only (bla_metric.paper, the authors' "
        "get_cls_statistics); unparsed answers counted per task",
    }
