"""The rows of every dataset repo the project writes and reads, and BLA's dataset version: the one
definition the builders (which write them), the engine's benchmark specs (which read them) and
the tests import.

A schema lists a dataset's columns in file order, each typed as ``datasets`` names it: a
``Value``'s dtype (``string``, ``int8``, ...), ``image`` for an ``Image``, and ``[]`` after a
type for a ``Sequence`` of it; :meth:`Schema.features` builds the ``datasets.Features``
(``datasets`` is imported then, not with this module, so the engine's specs load without it).
Task names, config names and caption types come from the task registry (:mod:`bla_metric.tasks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bla_metric.tasks import LEARNING_SPLITS, LEARNING_SUFFIX, TASKS, config_names, get_task

__all__ = [
    "BENCHMARK_ROWS",
    "BLA_ROWS",
    "COLUMNS",
    "DATASET_VERSION",
    "LEARNING_SPLITS",
    "LEARNING_SUFFIX",
    "SENTENCE_COLUMNS",
    "SENTENCE_ROWS",
    "SENTENCES_SUFFIX",
    "Schema",
    "caption_types",
    "config_names",
    "sentence_config",
    "sentence_configs",
    "task_configs",
]


@dataclass(frozen=True)
class Schema:
    """One dataset's rows: ``columns`` (name -> type, in file order) and the ``required`` ones,
    those every item is read from (the engine refuses a dataset without them)."""

    columns: Mapping[str, str]
    required: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The column names in file order."""
        return tuple(self.columns)

    @property
    def optional(self) -> tuple[str, ...]:
        """The columns besides the required ones (metadata), in file order."""
        return tuple(name for name in self.columns if name not in self.required)

    def features(self) -> Any:
        """The ``datasets.Features`` of these rows (the parquet files' ``huggingface`` metadata)."""
        import datasets

        return datasets.Features({name: _feature(kind) for name, kind in self.columns.items()})


def _feature(kind: str) -> Any:
    import datasets

    if kind.endswith("[]"):
        return datasets.Sequence(_feature(kind[: -len("[]")]))
    return datasets.Image() if kind == "image" else datasets.Value(kind)


DATASET_VERSION = "1.0.0"
"""Semantic version of the built dataset repo (bump on any change to its content or layout)."""


def task_configs() -> dict[str, str]:
    """Short task code -> config name of the whole benchmark (split ``test``), registry order."""
    return {code: task.config for code, task in TASKS.items()}


def caption_types(config: str) -> tuple[str, ...]:
    """Caption types of ``config`` (or its learning config) in release order."""
    return get_task(config).caption_types


_ITEM = {
    "id": "string",
    "image": "image",
    "captions": "string[]",
    "labels": "int8[]",
    "caption_types": "string[]",
}
"""One image with its texts: the columns of an item of BLA and of the one-image benchmarks."""

BLA_ROWS = Schema(
    {
        "id": "string",
        "image": "image",
        "image_id": "string",
        "captions": "string[]",
        "labels": "int8[]",
        "caption_types": "string[]",
        "predicate": "string",
        "grammar_scores": "float64[]",
    },
    tuple(_ITEM),
)
"""Every config and split of BLA. ``grammar_scores`` is null where the release has none."""

COLUMNS: tuple[str, ...] = BLA_ROWS.names

SENTENCES_SUFFIX = "_sentences"
"""Suffix of the per-sentence config of a task (``active_passive_sentences``), split ``test``."""


def sentence_config(config: str) -> str:
    """The per-sentence config of a task's config (``active_passive`` ->
    ``active_passive_sentences``)."""
    return get_task(config).config + SENTENCES_SUFFIX


def sentence_configs() -> list[str]:
    """The per-sentence config of every task, registry order (written after ``config_names()``)."""
    return [task.config + SENTENCES_SUFFIX for task in TASKS.values()]


_SENTENCE = {
    "id": "string",
    "datapoint_id": "string",
    "position": "int8",
    "image_id": "string",
    "sentence": "string",
    "caption_type": "string",
    "label": "int8",
    "question": "string",
    "target": "string",
    "image": "string",
}
SENTENCE_ROWS = Schema(_SENTENCE, tuple(_SENTENCE))
"""The per-sentence configs: one row per (image, sentence) of the ``test`` split, in
release order, for harnesses that ask one question per row (``inspect eval hf/<dataset>``).
``id`` is ``<datapoint_id>-<position>``; ``question`` the default prompt template's question
about ``sentence``; ``target`` ``yes`` (label 1) or ``no``; ``image`` the datapoint's original
image bytes as a ``data:`` URI (the column ``eval.yaml`` names as ``input_image``)."""

SENTENCE_COLUMNS: tuple[str, ...] = SENTENCE_ROWS.names


_TWO_IMAGES = {"id": "string", "image_0": "image", "image_1": "image"}

BENCHMARK_ROWS: dict[str, Schema] = {
    "bla": BLA_ROWS,
    "valse": Schema(
        {
            **_ITEM,
            "image_file": "string",
            "instrument": "string",
            "dataset": "string",
            "linguistic_phenomena": "string",
            "classes": "string",
            "classes_foil": "string",
            "mturk_caption": "int8",
            "mturk_foil": "int8",
            "mturk_other": "int8",
            "validated": "bool",
            "metadata": "string",
        },
        tuple(_ITEM),
    ),
    "vl-checklist": Schema(
        {**_ITEM, "image_path": "string", "corpus": "string", "source": "string"}, tuple(_ITEM)
    ),
    "winoground": Schema(
        {
            **_TWO_IMAGES,
            "caption_0": "string",
            "caption_1": "string",
            "tag": "string",
            "secondary_tag": "string",
            "num_main_preds": "int32",
            "collapsed_tag": "string",
        },
        (*_TWO_IMAGES, "caption_0", "caption_1"),
    ),
    "sugarcrepe": Schema({**_ITEM, "filename": "string"}, tuple(_ITEM)),
    "sugarcrepe-pp": Schema({**_ITEM, "filename": "string"}, tuple(_ITEM)),
    "aro": Schema(
        {**_ITEM, "image_path": "string", "group": "string", "bbox": "float32[]"}, tuple(_ITEM)
    ),
    "mmvp-vlm": Schema(
        {
            **_TWO_IMAGES,
            "caption_0": "string",
            "caption_1": "string",
            "pattern": "string",
            "question_ids": "string[]",
        },
        (*_TWO_IMAGES, "caption_0", "caption_1"),
    ),
    "naturalbench": Schema(
        {
            **_TWO_IMAGES,
            "question_0": "string",
            "question_1": "string",
            "answers": "string[][]",
            "question_type": "string",
            "source": "string",
        },
        (*_TWO_IMAGES, "question_0", "question_1", "answers"),
    ),
}
"""The rows of each benchmark's dataset repo, by benchmark name (``bla-eval --benchmark``; the
builder of the same name writes it). VALSE and VL-CheckList rows are one image with its texts in
the order true, false (``captions``/``labels``/``caption_types``: caption, foil / POS, NEG).
Winoground rows keep the Hub release's columns (two images, two captions, tags). SugarCrepe(++)
and ARO rows are one image with its texts, the true ones first (SugarCrepe++: two positives, then
the negative; ARO: the image already cropped to the relation's box, ``group`` its relation or
attribute pair). MMVP-VLM rows are a pair of images with statement ``k`` true of image ``k``;
NaturalBench rows two images, two questions and ``answers[image][question]`` ("Yes"/"No")."""
