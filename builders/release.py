"""Release -> dataset repo: read and check the BLA release, then write parquet, card, manifest.

``build_release(source, out)`` is the one entry point (``python -m builders release``).
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path

from bla_eval.outputs import check_replaceable
from tqdm.auto import tqdm

from bla_metric.schema import config_names
from bla_metric.tasks import TASKS
from builders.card import render_card
from builders.hub_eval import EVAL_FILE, render_eval_yaml
from builders.io import data_file, dump_json, staged_folder, write_parquet, write_text
from builders.manifest import make_manifest
from builders.records import Datapoint, image_file, main_file, read_learning, read_main
from builders.sentences import write_sentence_tables
from builders.source import ReleaseSource
from builders.validate import check_decodable, check_images_present, check_rows, check_unique

BUILDER = "python -m builders release"

Tables = dict[str, dict[str, list[Datapoint]]]
"""config -> split -> datapoints, in release order."""


def read_release(source: ReleaseSource) -> Tables:
    """Parse and check every annotation file of the release (no image is read here)."""
    tables: Tables = {}
    for task in TASKS.values():
        main = read_main(source, task.config)
        check_unique(main, source.describe(main_file(task.config)))
        check_rows("test", main)
        tables[task.config] = {"test": main}
        learning = read_learning(source, task.config, main)
        for split, rows in learning.items():
            check_rows(split, rows)
        check_unique(chain.from_iterable(learning.values()), f"config {task.learning_config}")
        tables[task.learning_config] = learning
    return {config: tables[config] for config in config_names()}


def read_images(source: ReleaseSource, tables: Tables, progress: bool = True) -> dict[str, bytes]:
    """The original bytes of every image the tables use, each checked to decode."""
    first_use: dict[str, Datapoint] = {}
    for rows in (rows for splits in tables.values() for rows in splits.values()):
        for dp in rows:
            first_use.setdefault(dp.image_id, dp)
    check_images_present(source, first_use.values())
    images: dict[str, bytes] = {}
    for image_id, dp in tqdm(
        sorted(first_use.items()), desc="images", unit="img", disable=not progress
    ):
        data = source.read_bytes(image_file(image_id))
        check_decodable(data, f"{dp.where}: {source.describe(image_file(image_id))}")
        images[image_id] = data
    return images


def to_row(dp: Datapoint, images: dict[str, bytes]) -> dict:
    """A BLA_ROWS row; the image is the original JPEG bytes, not re-encoded (null when
    ``images`` lacks it: constructed sets built without the Visual Genome images)."""
    return {
        "id": dp.id,
        "image": (
            {"bytes": images[dp.image_id], "path": f"{dp.image_id}.jpg"}
            if dp.image_id in images
            else None
        ),
        "image_id": dp.image_id,
        "captions": list(dp.captions),
        "labels": list(dp.labels),
        "caption_types": list(dp.caption_types),
        "predicate": dp.predicate,
        "grammar_scores": None if dp.grammar_scores is None else list(dp.grammar_scores),
    }


def write_tables(
    stage: Path, tables: Tables, images: dict[str, bytes], progress: bool = True
) -> dict[str, dict[str, dict[str, int]]]:
    """Write one parquet file per config and split; return their example and byte counts."""
    info: dict[str, dict[str, dict[str, int]]] = {}
    jobs = [(c, s) for c, splits in tables.items() for s in splits]
    for config, split in tqdm(jobs, desc="parquet", unit="file", disable=not progress):
        rows = [to_row(dp, images) for dp in tables[config][split]]
        path = stage / data_file(config, split)
        num_bytes = write_parquet(rows, path)
        info.setdefault(config, {})[split] = {
            "num_examples": len(rows),
            "num_bytes": num_bytes,
            "file_bytes": path.stat().st_size,
        }
    return info


def build_release(source: Path, out: Path, progress: bool = True) -> dict:
    """Build the dataset repo at ``out`` from the release folder or zip ``source``.

    Everything is validated before writing; the repo is written to a temporary folder and moved
    into place, so ``out`` is left as it was on any error. Returns the manifest.
    """
    out = Path(out)
    check_replaceable(out, BUILDER, keep_hidden=True)  # before the long read, not only the swap
    with ReleaseSource(Path(source)) as release:
        tables = read_release(release)
        images = read_images(release, tables, progress)
        with staged_folder(out, BUILDER) as stage:
            info = write_tables(stage, tables, images, progress)
            tests = {task.config: tables[task.config]["test"] for task in TASKS.values()}
            info |= write_sentence_tables(stage, tests, images)
            write_text(stage / "README.md", render_card(tables, info))
            write_text(stage / EVAL_FILE, render_eval_yaml())
            manifest = make_manifest(stage, info, release.read_hashes, builder=BUILDER)
            write_text(stage / "manifest.json", dump_json(manifest))
    return manifest
