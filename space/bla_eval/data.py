"""Load BLA datapoints from a Hub dataset id or a local dataset folder, and decode their images.

The engine does not import ``builders`` (the Space is deployed without it), so the few names it
needs from the schema are repeated here: the task config names and the columns the engine reads.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

HUB_DATASET_ID = "bla-benchmark/bla"
"""Hub id of the published dataset (used when no local build is found)."""

LOCAL_DATASET_DIR = Path(__file__).resolve().parents[2] / "bla_dataset"
"""The dataset repo built inside this project checkout (``python -m builders ...`` writes it)."""

TASKS: dict[str, str] = {"ap": "active_passive", "co": "coordination", "rc": "relative_clause"}
"""Short task name -> dataset config name (as in ``builders/schema.py``)."""

REQUIRED_COLUMNS: tuple[str, ...] = ("id", "image", "captions", "labels", "caption_types")
"""Columns the engine reads; ``image_id`` is used when present to share images across tasks."""


@dataclass(frozen=True)
class Datapoint:
    """One image with its sentences, as the engine scores it."""

    task: str
    id: str
    image_key: str
    image: dict[str, Any] | None
    captions: list[str]
    labels: list[int]
    caption_types: list[str]


def default_data() -> str:
    """The project's dataset: the local build if there is one, else the Hub id."""
    if (LOCAL_DATASET_DIR / "data").is_dir():
        return str(LOCAL_DATASET_DIR)
    return HUB_DATASET_ID


def config_name(task: str) -> str:
    """Map a short task name (ap, co, rc) or a config name to the config name."""
    if task in TASKS:
        return TASKS[task]
    if task in TASKS.values() or task.endswith("_learning"):
        return task
    raise ValueError(f"unknown task {task!r}: use one of {', '.join(TASKS)} or a config name")


def load_split(data: str, config: str, split: str = "test"):
    """One config and split as a ``datasets.Dataset``, fields checked, images left encoded."""
    import datasets

    if Path(data).is_dir():
        # Local folders go through the parquet builder: its cache key includes the files' metadata,
        # whereas a folder's cache key does not distinguish two folders of the same name.
        ds = datasets.load_dataset("parquet", data_files={split: _local_files(data, config, split)})
        ds = ds[split]
    else:
        ds = datasets.load_dataset(data, config, split=split)
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise ValueError(
            f"dataset {data!r} config {config!r} lacks the field(s) {', '.join(missing)} "
            f"(has {', '.join(ds.column_names)})"
        )
    if isinstance(ds.features["image"], datasets.Image):
        ds = ds.cast_column("image", datasets.Image(decode=False))
    return ds


def _local_files(data: str, config: str, split: str) -> list[str]:
    """Parquet files of one config and split in a local dataset folder (``data/<config>/`` layout,
    else the folder's dataset card)."""
    import datasets

    files = sorted(str(f) for f in (Path(data) / "data" / config).glob(f"{split}-*.parquet"))
    if not files:
        try:
            builder = datasets.load_dataset_builder(data, config)
        except ValueError as err:
            raise ValueError(f"dataset {data!r} has no config {config!r}: {err}") from err
        files = list((builder.config.data_files or {}).get(split) or [])
    if not files:
        raise ValueError(f"dataset {data!r} config {config!r} has no split {split!r}")
    return files




def _image_key(row: dict[str, Any]) -> str:
    image_id = row.get("image_id")
    if image_id not in (None, ""):
        return f"id:{image_id}"
    image = row["image"] or {}
    if image.get("bytes"):
        return "sha1:" + hashlib.sha1(image["bytes"]).hexdigest()
    return f"path:{image.get('path')}"


def load_datapoints(
    data: str, tasks: tuple[str, ...] | list[str], split: str = "test", limit: int | None = None
) -> list[Datapoint]:
    """Datapoints of the given tasks (the first ``limit`` of each), in dataset order."""
    points: list[Datapoint] = []
    for task in tasks:
        config = config_name(task)
        ds = load_split(data, config, split)
        if limit is not None:
            ds = ds.select(range(min(limit, len(ds))))
        for row in ds:
            if len(row["captions"]) != len(row["labels"]):
                raise ValueError(
                    f"{config} datapoint {row['id']}: captions and labels differ in length"
                )
            points.append(
                Datapoint(
                    task=config,
                    id=str(row["id"]),
                    image_key=_image_key(row),
                    image=row["image"],
                    captions=list(row["captions"]),
                    labels=[int(x) for x in row["labels"]],
                    caption_types=list(row["caption_types"]),
                )
            )
    return points


def decode_image(point: Datapoint) -> Image.Image:
    """The datapoint's image as RGB; an error names the datapoint when it is missing or broken."""
    ref = point.image or {}
    try:
        if ref.get("bytes"):
            image = Image.open(io.BytesIO(ref["bytes"]))
        elif ref.get("path"):
            image = Image.open(ref["path"])
        else:
            raise FileNotFoundError("no image bytes or path")
        return image.convert("RGB")
    except (OSError, ValueError) as err:
        raise ValueError(
            f"image of {point.task} datapoint {point.id} ({point.image_key}) cannot be read: {err}"
        ) from err
