"""Parse the release's annotation files into datapoints (one per image and caption set)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bla_metric.schema import LEARNING_SPLITS
from bla_metric.tasks import get_task
from builders.source import ReleaseError, ReleaseSource

LEARNING_ROOT = "annotations/finetune/finetune_random"
LEARNING_FILES: dict[str, str] = {
    "train": "train.json",
    "validation": "valid.json",
    "test": "test.json",
}
assert tuple(LEARNING_FILES) == LEARNING_SPLITS

RELEASE_KEYS = ("True1", "True2", "False1", "False2")
"""Caption keys of a release record, in the order of ``Task.caption_types``."""
_CAPTION_KEY = re.compile(r"^(True|False)(\d+)$")


@dataclass(frozen=True)
class Datapoint:
    """One row of a config, without the image bytes. ``where`` names the record for errors."""

    id: str
    image_id: str
    captions: tuple[str, ...]
    labels: tuple[int, ...]
    caption_types: tuple[str, ...]
    predicate: str
    grammar_scores: tuple[float, ...] | None
    where: str


def main_file(config: str) -> str:
    """Path of the task file of ``config`` inside the release."""
    return f"annotations/{get_task(config).config}_captions.json"


def learning_file(config: str, split: str) -> str:
    """Path of one learning split of ``config`` inside the release."""
    return f"{LEARNING_ROOT}/{get_task(config).release_dir}/{LEARNING_FILES[split]}"


def image_file(image_id: str) -> str:
    """Path of the image ``image_id`` inside the release."""
    return f"images/{image_id}.jpg"


def read_main(source: ReleaseSource, config: str) -> list[Datapoint]:
    """The datapoints of one task file, in release order, with ids ``<short>-<position:04d>``."""
    rel = main_file(config)
    records = source.read_json(rel)
    if not isinstance(records, list):
        raise ReleaseError(f"{source.describe(rel)}: expected a list of records")
    return [
        _parse_main(record, config, pos, source.describe(rel)) for pos, record in enumerate(records)
    ]


def _parse_main(record: object, config: str, pos: int, file: str) -> Datapoint:
    where = f"{file}, record {pos}"
    if not isinstance(record, dict) or "image_id" not in record or "caption_group" not in record:
        raise ReleaseError(f"{where}: expected a dict with 'image_id' and 'caption_group'")
    image_id = str(record["image_id"])
    where = f"{where} (image_id {image_id})"
    groups = record["caption_group"]
    if not isinstance(groups, list) or len(groups) != 1 or not isinstance(groups[0], dict):
        raise ReleaseError(f"{where}: expected exactly one caption set in 'caption_group'")
    group = groups[0]
    keys = sorted(
        (k for k in group if _CAPTION_KEY.match(k)),
        key=lambda k: (_CAPTION_KEY.match(k)[1] == "False", int(_CAPTION_KEY.match(k)[2])),
    )
    captions = tuple(group[k] for k in keys)
    if not all(isinstance(c, str) and c.strip() for c in captions):
        raise ReleaseError(f"{where}: every caption must be a non-empty string")
    labels = tuple(int(k.startswith("True")) for k in keys)
    scores = group.get("score")
    if scores is not None and (
        not isinstance(scores, list)
        or len(scores) != len(captions)
        or not all(isinstance(s, (int, float)) for s in scores)
    ):
        raise ReleaseError(f"{where}: 'score' must be {len(captions)} numbers, got {scores!r}")
    predicate = group.get("predicate", "") if config == "active_passive" else ""
    task = get_task(config)
    types = dict(zip(RELEASE_KEYS, task.caption_types, strict=True))
    return Datapoint(
        id=f"{task.code}-{pos:04d}",
        image_id=image_id,
        captions=captions,
        labels=labels,
        caption_types=tuple(types.get(k, k) for k in keys),  # unknown keys fail validation
        predicate=str(predicate),
        grammar_scores=None if scores is None else tuple(float(s) for s in scores),
        where=where,
    )


def read_learning(
    source: ReleaseSource, config: str, main: list[Datapoint]
) -> dict[str, list[Datapoint]]:
    """The learning splits of one task, each caption matched to its full release record.

    Labels, caption types and grammar scores come from the matching record of the task file;
    ids are those of that record, so a learning row can be joined with the benchmark row.
    """
    by_image = {dp.image_id: dp for dp in main}
    splits: dict[str, list[Datapoint]] = {}
    for split in LEARNING_FILES:
        rel = learning_file(config, split)
        file = source.describe(rel)
        entries = source.read_json(rel)
        if not isinstance(entries, dict):
            raise ReleaseError(f"{file}: expected a dict image_id -> captions")
        splits[split] = [
            _match_learning(image_id, captions, by_image, f"{file}, image_id {image_id}")
            for image_id, captions in entries.items()
        ]
    return splits


def _match_learning(
    image_id: str, captions: object, by_image: dict[str, Datapoint], where: str
) -> Datapoint:
    full = by_image.get(str(image_id))
    if full is None:
        raise ReleaseError(f"{where}: no record with this image_id in the task file")
    if not isinstance(captions, list) or not all(isinstance(c, str) for c in captions):
        raise ReleaseError(f"{where}: expected a list of caption strings")
    positions = []
    for caption in captions:
        if caption not in full.captions:
            raise ReleaseError(f"{where}: caption {caption!r} is not in record {full.where}")
        positions.append(full.captions.index(caption))
    scores = full.grammar_scores
    return Datapoint(
        id=full.id,
        image_id=full.image_id,
        captions=tuple(captions),
        labels=tuple(full.labels[p] for p in positions),
        caption_types=tuple(full.caption_types[p] for p in positions),
        predicate=full.predicate,
        grammar_scores=None if scores is None else tuple(scores[p] for p in positions),
        where=where,
    )
