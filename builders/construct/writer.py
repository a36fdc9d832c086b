"""Write constructed caption sets in the project's dataset format (parquet + card + manifest).

Layout, card and manifest are those of ``python -m builders release`` (one card writer,
``builders.card.render_card``, and one manifest format, ``builders.manifest.make_manifest``), so
``python -m builders publish`` takes a constructed folder as it takes the release build. Besides:
``out/construct_report.json``. ``image`` is null when no image folder is given or the image is not
found in it.
"""

from __future__ import annotations

from pathlib import Path

from bla_eval.outputs import check_replaceable

from bla_metric.tasks import get_task
from builders.card import render_card
from builders.construct.pipeline import CaptionSet, ConstructResult
from builders.io import dump_json, staged_folder, write_text
from builders.manifest import MANIFEST, make_manifest
from builders.records import Datapoint
from builders.release import write_tables

BUILDER = "python -m builders construct"

IMAGE_SUBFOLDERS = ("", "images", "VG_100K", "VG_100K_2")
"""Where an image ``<id>.jpg`` is looked for under ``--images`` (VG ships two folders)."""


class NothingConstructed(ValueError):
    """No caption set survived the construction: there is no dataset to write."""


def find_image(images: Path | None, image_id: int) -> Path | None:
    """The image file of ``image_id`` under ``images``, or None."""
    if images is None:
        return None
    for sub in IMAGE_SUBFOLDERS:
        path = images / sub / f"{image_id}.jpg"
        if path.is_file():
            return path
    return None


def datapoints(task: str, sets: list[CaptionSet]) -> list[Datapoint]:
    """The kept sets as dataset rows (ids ``<task>-<position:04d>``, labels 1/1/0/0)."""
    spec = get_task(task)
    return [
        Datapoint(
            id=f"{spec.code}-{position:04d}",
            image_id=str(caption_set.image_id),
            captions=tuple(caption_set.captions),
            labels=(1, 1, 0, 0),
            caption_types=spec.caption_types,
            predicate=caption_set.predicate,
            grammar_scores=None if caption_set.scores is None else tuple(caption_set.scores),
            where=f"Visual Genome image {caption_set.image_id}",
        )
        for position, caption_set in enumerate(sets)
    ]


def read_images(sets: list[CaptionSet], images: Path | None) -> dict[str, bytes]:
    """image_id -> JPEG bytes of every kept set's image found under ``images``."""
    found = {}
    for caption_set in sets:
        path = find_image(images, caption_set.image_id)
        if path is not None:
            found[str(caption_set.image_id)] = path.read_bytes()
    return found


def provenance(n_rows: int, scorer: str, n_images: int) -> str:
    """The card's provenance section of a constructed set."""
    scores = (
        f"the acceptability scores of the four captions by `{scorer}` (not GRUEN)"
        if scorer
        else "null (grammar filter off)"
    )
    return f"""These caption sets were built by `python -m builders construct` (the BLA paper's
pipeline, section 3.3) from Visual Genome annotations: {n_rows} caption sets. They are not the
published benchmark.

- `grammar_scores`: {scores}.
- `image`: embedded when the build was given the Visual Genome images ({n_images} of {n_rows}
  found); otherwise null -- join on `image_id` with Visual Genome.
- `construct_report.json`: how many images, relationships and sets each step kept or dropped, and
  the configuration used.
"""


def check_result(result: ConstructResult, task: str) -> None:
    """Refuse a run in which no caption set survived, saying where they were lost."""
    if result.sets:
        return
    steps = result.report.to_json()
    read = steps.get("images", {}).get("read", 0)
    why = "; ".join(
        f"{unit} {k.removeprefix('dropped: ')} ({v})"
        for unit, outcomes in steps.items()
        for k, v in outcomes.items()
        if k.startswith("dropped")
    )
    raise NothingConstructed(
        f"no {get_task(task).config} caption set survived the construction from {read} "
        f"Visual Genome images ({why or 'no image was read'}); nothing was written"
    )


def write_result(
    result: ConstructResult, task: str, out: Path, images: Path | None, config_json: dict
) -> dict:
    """Write the dataset folder (replacing a previous build atomically); returns the manifest.

    Raises :class:`NothingConstructed` (nothing written) when no set survived.
    """
    check_result(result, task)
    check_replaceable(Path(out), BUILDER, keep_hidden=True)
    config = get_task(task).config
    tables = {config: {"test": datapoints(task, result.sets)}}
    image_bytes = read_images(result.sets, images)
    report = {
        "task": config,
        "scorer": result.scorer_name,
        "steps": result.report.to_json(),
        "config": config_json,
    }
    with staged_folder(Path(out), BUILDER) as stage:
        info = write_tables(stage, tables, image_bytes, progress=False)
        card = render_card(
            tables, info, provenance(len(result.sets), result.scorer_name, len(image_bytes))
        )
        write_text(stage / "README.md", card)
        write_text(stage / "construct_report.json", dump_json(report))
        manifest = make_manifest(
            stage,
            info,
            {},
            builder=BUILDER,
            extra={"images_embedded": len(image_bytes), "scorer": result.scorer_name},
        )
        write_text(stage / MANIFEST, dump_json(manifest))
    return manifest
