"""The BLA row schema and config names: the one definition every other module reads."""

from __future__ import annotations

import datasets

DATASET_VERSION = "1.0.0"
"""Semantic version of the built dataset repo (bump on any change to its content or layout)."""

TASKS: dict[str, str] = {"ap": "active_passive", "co": "coordination", "rc": "relative_clause"}
"""Short task name -> config name of the whole benchmark (split ``test``)."""

LEARNING_SUFFIX = "_learning"
LEARNING_SPLITS = ("train", "validation", "test")

CAPTION_TYPES: dict[str, list[str]] = {
    "active_passive": ["TA", "TP", "FA", "FP"],
    "coordination": ["TP1", "TP2", "FP1", "FP2"],
    "relative_clause": ["TP1", "TP2", "FP1", "FP2"],
}
"""Caption types in release order (True1, True2, False1, False2)."""

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


def config_names() -> list[str]:
    """All config names: the three tasks, then their learning variants."""
    tasks = list(TASKS.values())
    return tasks + [t + LEARNING_SUFFIX for t in tasks]
