"""Checks run before anything is written; each error names the record and the file."""

from __future__ import annotations

import io
from collections.abc import Iterable

from PIL import Image

from bla_metric.tasks import TASKS
from builders.records import Datapoint, image_file
from builders.source import ReleaseError, ReleaseSource

EXPECTED_LABELS: dict[str, tuple[int, int]] = {
    "train": (1, 1),
    "validation": (2, 2),
    "test": (2, 2),
}
"""Split -> (number of true, number of false) captions per row."""


def known_types() -> frozenset[str]:
    """Caption types of every registered task."""
    return frozenset(t for task in TASKS.values() for t in task.caption_types)


def check_rows(split: str, rows: list[Datapoint]) -> None:
    """Distinct captions, the right number of true and false captions, a known type for each."""
    n_true, n_false = EXPECTED_LABELS[split]
    for dp in rows:
        if len(set(dp.captions)) != len(dp.captions):
            raise ReleaseError(f"{dp.where}: captions are not distinct: {list(dp.captions)}")
        got_true = sum(dp.labels)
        got_false = len(dp.labels) - got_true
        if (got_true, got_false) != (n_true, n_false):
            raise ReleaseError(
                f"{dp.where}: {got_true} true and {got_false} false captions; "
                f"a {split} row needs {n_true} true and {n_false} false"
            )
        unknown = [t for t in dp.caption_types if t not in known_types()]
        if unknown:
            raise ReleaseError(
                f"{dp.where}: unknown caption keys {unknown} "
                "(expected True1, True2, False1, False2)"
            )


def check_unique(rows: Iterable[Datapoint], what: str) -> None:
    """Every id and every image_id occurs once among ``rows`` (``what`` names the collection).

    ``rows`` may be any iterable (a one-pass iterator too): it is read once.
    """
    rows = list(rows)
    for attribute in ("id", "image_id"):
        seen: dict[str, Datapoint] = {}
        for dp in rows:
            key = getattr(dp, attribute)
            if key in seen:
                raise ReleaseError(
                    f"duplicate {attribute} {key!r} in {what}: {seen[key].where} and {dp.where}"
                )
            seen[key] = dp


def check_images_present(source: ReleaseSource, rows: Iterable[Datapoint]) -> None:
    """Every row's image file exists in the release."""
    for dp in rows:
        if not source.exists(image_file(dp.image_id)):
            raise ReleaseError(
                f"{dp.where}: image missing: {source.describe(image_file(dp.image_id))}"
            )


def check_decodable(data: bytes, where: str) -> None:
    """The bytes decode completely as an image (a truncated or corrupt file fails).

    ``where`` names the image file and a record that uses it.
    """
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
    except Exception as err:  # PIL raises many types for corrupt data
        raise ReleaseError(f"{where}: image cannot be decoded: {err}") from err
