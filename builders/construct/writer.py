"""Write constructed caption sets in the project's dataset format (parquet + card + report).

Layout (like the release build): ``out/README.md`` (card with ``configs``), ``out/manifest.json``,
``out/construct_report.json``, ``out/data/<config>/test-00000-of-00001.parquet``. Rows follow
``builders.schema.FEATURES``; ``image`` is null when no image folder is given or the image is not
found in it. Parquet writing, the crash-safe folder swap, file names and checksums are reused from
``builders.io``, ``builders.release`` and ``builders.manifest``; the card is this module's own.
"""

from __future__ import annotations

from pathlib import Path

from builders.construct.pipeline import CaptionSet, ConstructResult
from builders.io import dump_json, staged_folder, write_parquet, write_text
from builders.manifest import sha256_file
from builders.release import data_file
from builders.schema import CAPTION_TYPES, DATASET_VERSION, TASKS

IMAGE_SUBFOLDERS = ("", "images", "VG_100K", "VG_100K_2")
"""Where an image ``<id>.jpg`` is looked for under ``--images`` (VG ships two folders)."""


def find_image(images: Path | None, image_id: int) -> Path | None:
    """The image file of ``image_id`` under ``images``, or None."""
    if images is None:
        return None
    for sub in IMAGE_SUBFOLDERS:
        path = images / sub / f"{image_id}.jpg"
        if path.is_file():
            return path
    return None


def rows(task: str, sets: list[CaptionSet], images: Path | None) -> list[dict]:
    """Dataset rows (FEATURES columns) with ids ``<task>-<position:04d>``."""
    config = TASKS[task]
    out = []
    for position, caption_set in enumerate(sets):
        image_path = find_image(images, caption_set.image_id)
        image = {"bytes": image_path.read_bytes(), "path": image_path.name} if image_path else None
        out.append({
            "id": f"{task}-{position:04d}",
            "image": image,
            "image_id": str(caption_set.image_id),
            "captions": list(caption_set.captions),
            "labels": [1, 1, 0, 0],
            "caption_types": list(CAPTION_TYPES[config]),
            "predicate": caption_set.predicate,
            "grammar_scores": caption_set.scores,
        })
    return out


def card(config: str, n_rows: int, scorer: str, n_images: int) -> str:
    """README.md with the ``configs`` block ``datasets.load_dataset`` reads."""
    return f"""---
configs:
- config_name: {config}
  data_files:
  - split: test
    path: {data_file(config, "test")}
license: cc-by-4.0
---
# BLA caption sets constructed from Visual Genome ({config})

Built by `python -m builders construct` (the BLA paper's pipeline, section 3.3) from Visual Genome
annotations: {n_rows} caption sets. Rows follow the BLA dataset format (version {DATASET_VERSION}):
four captions in the order True1, True2, False1, False2, labels 1/1/0/0.

- `grammar_scores`: the acceptability scores of the four captions by `{scorer}` (not GRUEN).
- `image`: embedded when the build was given the Visual Genome images ({n_images} of {n_rows}
  found); otherwise null -- join on `image_id` with Visual Genome.
- `construct_report.json`: how many images, relationships and sets each step kept or dropped, and
  the configuration used.

Images: Visual Genome (CC BY 4.0). Construction code: MIT.
"""


def write_result(result: ConstructResult, task: str, out: Path, images: Path | None,
                 config_json: dict) -> dict:
    """Write the dataset folder (replacing a previous build atomically); returns the manifest."""
    config = TASKS[task]
    data_rows = rows(task, result.sets, images)
    n_images = sum(r["image"] is not None for r in data_rows)
    report = {"task": config, "scorer": result.scorer_name, "steps": result.report.to_json(),
              "config": config_json}
    with staged_folder(out) as stage:
        parquet = stage / data_file(config, "test")
        write_parquet(data_rows, parquet)
        write_text(stage / "README.md", card(config, len(data_rows), result.scorer_name, n_images))
        write_text(stage / "construct_report.json", dump_json(report))
        manifest = {
            "kind": "construct",
            "version": DATASET_VERSION,
            "configs": {config: {"test": len(data_rows)}},
            "images_embedded": n_images,
            "files": {
                str(p.relative_to(stage)): sha256_file(p)
                for p in sorted(stage.rglob("*")) if p.is_file()
            },
        }
        write_text(stage / "manifest.json", dump_json(manifest))
    return manifest
