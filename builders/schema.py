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
    "caption_types",
    "config_names",
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
