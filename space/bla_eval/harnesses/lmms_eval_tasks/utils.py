"""Functions of BLA's lmms-eval tasks (their YAML files name them with ``!function utils.*``).

The prompt is the ``authors`` prompt template's chat turn (``bla-eval --protocol paper``); an
answer is scored by ``bla_metric.answers``; the metrics are the BLA benchmark's ``summarise`` over
the records of whole datapoints, the records ``bla-eval`` writes to ``scores.jsonl``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

from bla_eval.benchmarks.bla import BENCHMARK
from bla_eval.protocols import get_protocol
from bla_metric.answers import answer_score, parse_answer

PROTOCOL = "paper"
"""The protocol whose question and answer rule the tasks use."""


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The row's image (a ``data:`` URI of the original bytes) as a PIL image."""
    from PIL import Image

    encoded = base64.b64decode(doc["image"].split(",", 1)[1])
    return [Image.open(io.BytesIO(encoded)).convert("RGB")]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    """The question about the row's sentence (the text of its chat turn)."""
    return get_protocol(PROTOCOL).prompt_template.ask(doc["sentence"])


def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> list[dict]:
    """The chat turn ``bla-eval`` builds for the sentence, its image part holding the image."""
    turns = get_protocol(PROTOCOL).prompt_template.chat(doc["sentence"])
    [image] = doc_to_visual(doc)
    for turn in turns:
        for part in turn["content"]:
            if part["type"] == "image":
                part["url"] = image
    return turns


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, dict[str, Any]]:
    """The row's answer with what a datapoint's record needs, under every metric's name."""
    answer = results[0] if isinstance(results[0], str) else getattr(results[0], "text", "")
    row = {
        "datapoint_id": doc["datapoint_id"],
        "position": int(doc["position"]),
        "label": int(doc["label"]),
        "caption_type": doc["caption_type"],
        "answer": answer,
    }
    return {name: row for name in METRICS}


def records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of each datapoint joined into its record (``scores.jsonl``'s fields), in the
    order of their first row."""
    points: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        points.setdefault(row["datapoint_id"], []).append(row)
    out = []
    for point, sentences in points.items():
        sentences.sort(key=lambda r: r["position"])
        answers = [r["answer"] for r in sentences]
        out.append(
            {
                "id": point,
                "scores": [answer_score(a) for a in answers],
                "labels": [r["label"] for r in sentences],
                "caption_types": [r["caption_type"] for r in sentences],
                "answers": answers,
                "parsed": [parse_answer(a) for a in answers],
            }
        )
    return out


def _aggregate(view: str, name: str) -> Callable[[list[dict[str, Any]]], float]:
    def aggregate(rows: list[dict[str, Any]]) -> float:
        summary = BENCHMARK.summarise(records(rows), True)
        return float(summary[view][name] if view else summary[name])

    aggregate.__name__ = f"{view}_{name}" if view else name
    return aggregate


METRICS = {
    "ranking_sentence_accuracy": ("ranking", "sentence_accuracy"),
    "ranking_set_accuracy": ("ranking", "set_accuracy"),
    "binary_accuracy": ("binary", "accuracy"),
    "unparsed": ("", "unparsed"),
}
"""lmms-eval metric name -> (view, metric) of the benchmark's summary."""

ranking_sentence_accuracy = _aggregate(*METRICS["ranking_sentence_accuracy"])
ranking_set_accuracy = _aggregate(*METRICS["ranking_set_accuracy"])
binary_accuracy = _aggregate(*METRICS["binary_accuracy"])
unparsed = _aggregate(*METRICS["unparsed"])
