"""The BLA row schema and dataset version: the one definition every other module reads.

Task names, config names and caption types come from the task registry
(:mod:`bla_metric.tasks`); this module only re-exports the views the builders use.
"""

from __future__ import annotations

import datasets

from bla_metric.tasks import LEARNING_SPLITS, LEARNING_SUFFIX, TASKS, config_names, get_task

__all__ = [
    "COLUMNS",
    "DATASET_VERSION",
    "FEATURES",
    "LEARNING_SPLITS",
    "LEARNING_SUFFIX",
    "SENTENCE_COLUMNS",
    "SENTENCE_FEATURES",
    "SENTENCES_SUFFIX",
    "caption_types",
    "config_names",
    "sentence_config",
    "sentence_configs",
    "task_configs",
]

DATASET_VERSION = "1.0.0"
"""Semantic version of the built dataset repo (bump on any change to its content or layout)."""


def task_configs() -> dict[str, str]:
    """Short task code -> config name of the whole benchmark (split ``test``), registry order."""
    return {code: task.config for code, task in TASKS.items()}


def caption_types(config: str) -> tuple[str, ...]:
    """Caption types of ``config`` (or its learning config) in release order."""
    return get_task(config).caption_types


FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "image": datasets.Image(),
        "image_id": datasets.Value("string"),
        "captions": datasets.Sequence(datasets.Value("string")),
        "labels": datasets.Sequence(datasets.Value("int8")),
        "caption_types": datasets.Sequence(datasets.Value("string")),
        "predicate": datasets.Value("string"),
        "grammar_scores": datasets.Sequence(datasets.Value("float64")),
    }
)
"""Features of every config and split. ``grammar_scores`` is null where the release has none."""

COLUMNS: tuple[str, ...] = tuple(FEATURES)

SENTENCES_SUFFIX = "_sentences"
"""Suffix of the per-sentence config of a task (``active_passive_sentences``), split ``test``."""


def sentence_config(config: str) -> str:
    """The per-sentence config of a task's config (``active_passive`` ->
    ``active_passive_sentences``)."""
    return get_task(config).config + SENTENCES_SUFFIX


def sentence_configs() -> list[str]:
    """The per-sentence config of every task, registry order (written after ``config_names()``)."""
    return [task.config + SENTENCES_SUFFIX for task in TASKS.values()]


SENTENCE_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "datapoint_id": datasets.Value("string"),
        "position": datasets.Value("int8"),
        "image_id": datasets.Value("string"),
        "sentence": datasets.Value("string"),
        "caption_type": datasets.Value("string"),
        "label": datasets.Value("int8"),
        "question": datasets.Value("string"),
        "target": datasets.Value("string"),
        "image": datasets.Value("string"),
    }
)
"""Features of the per-sentence configs: one row per (image, sentence) of the ``test`` split, in
release order, for harnesses that ask one question per row (``inspect eval hf/<dataset>``).
``id`` is ``<datapoint_id>-<position>``; ``question`` the default prompt template's question
about ``sentence``; ``target`` ``yes`` (label 1) or ``no``; ``image`` the datapoint's original
image bytes as a ``data:`` URI (the column ``eval.yaml`` names as ``input_image``)."""

SENTENCE_COLUMNS: tuple[str, ...] = tuple(SENTENCE_FEATURES)
