"""ARO -> dataset repo: ``python -m builders aro [--annotations DIR --images DIR]
[--coco-order DIR] [--flickr30k-order DIR] --out DIR``.

Reads the authors' VG-Relation and VG-Attribution files (mertyg/vision-language-models-are-bows,
``visual_genome_relation.json`` / ``visual_genome_attribution.json``: lists of ``{"image_path",
"bbox_x", "bbox_y", "bbox_w", "bbox_h", "true_caption", "false_caption"}`` with
``relation_name`` or ``attributes``) and their images (``vgr_vga_images.zip`` unpacked). As
upstream's loaders do, each image is cropped to the box (stored as PNG). One config per task
(``vg_relation``, ``vg_attribution``), split ``test``; ``captions`` = [true, false], ``labels`` =
[1, 0], ``group`` the relation or the attribute pair ``<a>_<b>`` the macro accuracy averages over;
the item id is ``<group>-<position in the file>``, which is how the benchmark averages.

COCO-Order and Flickr30k-Order: the authors perturb each caption at load time with spaCy's tagger
and unseeded shuffles, so no two of their runs score the same captions. The fixed draw MTEB
scores (Hub datasets ``gowitheflow/ARO-COCO-order`` and ``gowitheflow/ARO-Flickr-Order``, MIT:
parquet with the image embedded in ``images`` and ``correct_caption``, ``hard_text_1`` ...
``hard_text_4``) is read instead: configs ``coco_order`` / ``flickr30k_order``, ``captions`` = the
correct caption then the four perturbations, ``labels`` = [1, 0, 0, 0, 0], one group ``order``
(item id ``order-<row>``), so the macro accuracy is the accuracy over items.
"""

from __future__ import annotations

import argparse
import io
from dataclasses import make_dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options, option

from bla_metric.neighbours.aro import ARO_ORDER_GROUP as ORDER_GROUP
from bla_metric.neighbours.aro import ARO_TASKS
from builders.manifest import sha256_file
from builders.neighbours import (
    BuildError,
    ConfigRows,
    ImageStore,
    RepoText,
    build_repo,
    embedded_image,
    finite,
    inside,
    out_folder,
    parquet_rows,
    read_json,
    run_cli,
    sha256_text,
    text_field,
)

BUILDER = "python -m builders aro"

FILES = {
    "vg_relation": "visual_genome_relation.json",
    "vg_attribution": "visual_genome_attribution.json",
}
"""Config -> the authors' annotation file."""

CITATION = r"""@inproceedings{yuksekgonul2023aro,
    title = {When and Why Vision-Language Models Behave like Bags-Of-Words, and What to Do
             About It?},
    author = {Yuksekgonul, Mert and Bianchi, Federico and Kalluri, Pratyusha and Jurafsky, Dan
              and Zou, James},
    booktitle = {International Conference on Learning Representations (ICLR)},
    year = {2023},
}"""

TEXT = RepoText(
    benchmark="aro",
    pretty_name="ARO (VG-Relation, VG-Attribution, COCO-Order, Flickr30k-Order)",
    intro=(
        "ARO (Yuksekgonul et al., ICLR 2023): a Visual Genome (GQA) image cropped to the box of "
        "a relation or of two attributed objects, its true caption and the caption with the two "
        "objects or attributes swapped (converted from the authors' JSON files and images); "
        "for COCO-Order and Flickr30k-Order, a COCO or Flickr30k image, its caption and four "
        "word-order perturbations of it (the fixed draw of gowitheflow/ARO-COCO-order and "
        "gowitheflow/ARO-Flickr-Order)."
    ),
    licence="The annotations are the authors' (MIT, mertyg/vision-language-models-are-bows; the "
    "Order draws MIT, gowitheflow); the images are Visual Genome's (CC BY 4.0), COCO's (Flickr "
    "terms of use) and Flickr30k's (non-commercial research use).",
    licenses=("mit",),
    citation=CITATION,
    config_titles=dict(ARO_TASKS),
)

_STRINGS = ("image_path", "true_caption", "false_caption")
_BOX = ("bbox_x", "bbox_y", "bbox_w", "bbox_h")
ORDER_TEXTS = ("correct_caption", "hard_text_1", "hard_text_2", "hard_text_3", "hard_text_4")
"""The Order tasks' caption columns: the caption, then its four perturbations."""
ORDER_SOURCES = {
    "coco_order": "gowitheflow/ARO-COCO-order",
    "flickr30k_order": "gowitheflow/ARO-Flickr-Order",
}
"""Order config -> the Hub dataset its ``--coco-order`` / ``--flickr30k-order`` folder downloads."""


def group_of(config: str, record: dict, where: str) -> str:
    """The relation (VG-Relation) or ``<attribute>_<attribute>`` (VG-Attribution) of a record."""
    if config == "vg_relation":
        name = record.get("relation_name")
        if not isinstance(name, str) or not name:
            raise BuildError(f"{where}: 'relation_name' must be a non-empty string")
        return name
    pair = record.get("attributes")
    if not isinstance(pair, list) or len(pair) < 2 or not all(isinstance(a, str) for a in pair):
        raise BuildError(f"{where}: 'attributes' must be a list of two strings")
    return f"{pair[0]}_{pair[1]}"


def cropped_png(data: bytes, box: list[float], where: str) -> bytes:
    """The image cropped to ``(x, y, w, h)`` as upstream crops it, encoded as PNG; a box with
    no area, or larger than PIL opens an image (``Image.MAX_IMAGE_PIXELS``, its guard against
    decompression bombs), is refused naming ``where``."""
    from PIL import Image

    x, y, w, h = box
    if w <= 0 or h <= 0:
        raise BuildError(f"{where}: the box has no area ({w} x {h})")
    limit = Image.MAX_IMAGE_PIXELS
    if limit is not None and w * h > limit:
        raise BuildError(
            f"{where}: the box of {w:g} x {h:g} is over the {limit} pixels of an image"
        )
    try:
        image = Image.open(io.BytesIO(data)).convert("RGB").crop((x, y, x + w, y + h))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
    except (OSError, ValueError, OverflowError, MemoryError, Image.DecompressionBombError) as err:
        raise BuildError(f"{where}: cannot crop the image to the box: {err}") from None
    return buffer.getvalue()


def build_aro(
    annotations: Path | None,
    images: Path | None,
    out: Path,
    order: dict[str, Path] | None = None,
) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the ARO repo at ``out`` from the task files found in ``annotations`` and the Order
    downloads in ``order`` (config -> folder)."""
    order = {config: Path(folder) for config, folder in (order or {}).items() if folder}
    if (annotations is None) != (images is None):
        raise BuildError("--annotations and --images go together (VG-Relation, VG-Attribution)")
    if annotations is None and not order:
        raise BuildError("give --annotations and --images, --coco-order or --flickr30k-order")
    configs: dict[str, ConfigRows] = {}
    hashes: dict[str, str] = {}
    if annotations is not None and images is not None:
        hashes.update(_visual_genome(Path(annotations), Path(images), configs))
    for config, folder in order.items():
        hashes.update(_order(config, folder, configs))
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


def _visual_genome(annotations: Path, images: Path, configs: dict[str, ConfigRows]) -> dict:
    """VG-Relation / VG-Attribution rows into ``configs``; the sources' hashes."""
    if not annotations.is_dir():
        raise BuildError(f"--annotations {annotations} is not a folder")
    if not images.is_dir():
        raise BuildError(f"--images {images} is not a folder")
    found = {c: annotations / f for c, f in FILES.items() if (annotations / f).is_file()}
    if not found:
        raise BuildError(f"--annotations {annotations} holds none of {', '.join(FILES.values())}")
    store = ImageStore()
    for config, path in found.items():
        part = configs.setdefault(config, ConfigRows())
        records = read_json(path)
        if not isinstance(records, list) or not records:
            raise BuildError(f"{path}: expected a non-empty list of items")
        for index, record in enumerate(records):
            where = f"{path} item {index}"
            if not isinstance(record, dict):
                raise BuildError(f"{where}: expected an object")
            for name in _STRINGS:
                text_field(record, name, where)
            box = finite([record.get(k) for k in _BOX], where, ", ".join(_BOX))
            group = group_of(config, record, where)
            image = inside(images, record["image_path"], where)
            if not image.is_file():
                part.missing_images += 1
                if len(part.missing_examples) < 3:
                    part.missing_examples.append(record["image_path"])
                continue
            part.rows.append(
                {
                    "id": f"{group}-{index}",
                    "image": {
                        "bytes": cropped_png(store.get(image, where), box, where),
                        "path": f"{Path(record['image_path']).stem}_{index}.png",
                    },
                    "captions": [record["true_caption"], record["false_caption"]],
                    "labels": [1, 0],
                    "caption_types": ["true_caption", "false_caption"],
                    "image_path": record["image_path"],
                    "group": group,
                    "bbox": box,
                }
            )
    hashes = {f"annotations/{p.name}": sha256_text(p) for p in found.values()}
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    return hashes


def _order(config: str, folder: Path, configs: dict[str, ConfigRows]) -> dict:
    """One Order task's rows into ``configs`` from a download of its Hub dataset; the parquet
    files' hashes."""
    flag = "--" + config.replace("_", "-")
    files = sorted(folder.glob("data/*.parquet")) or sorted(folder.glob("*.parquet"))
    if not folder.is_dir() or not files:
        raise BuildError(
            f"{flag} {folder} holds no data/*.parquet (a download of {ORDER_SOURCES[config]})"
        )
    part = configs.setdefault(config, ConfigRows())
    hashes = {}
    for path in files:
        rows = parquet_rows(path, ("images", *ORDER_TEXTS))
        for row in rows:
            index = len(part.rows)
            where = f"{path} row {index}"
            image = embedded_image(row["images"], where, "images")
            texts = [text_field(row, c, where) for c in ORDER_TEXTS]
            part.rows.append(
                {
                    "id": f"{ORDER_GROUP}-{index}",
                    "image": {"bytes": image["bytes"], "path": image.get("path") or f"{index}.jpg"},
                    "captions": texts,
                    "labels": [1, 0, 0, 0, 0],
                    "caption_types": list(ORDER_TEXTS),
                    "image_path": image.get("path") or "",
                    "group": ORDER_GROUP,
                    "bbox": [],
                }
            )
        hashes[f"{config}/{path.name}"] = sha256_file(path)
    return hashes


AroOptions = make_dataclass(
    "AroOptions",
    [
        (
            "annotations",
            Path | None,
            option(
                help="folder holding visual_genome_relation.json and/or "
                "visual_genome_attribution.json",
                type=Path,
            ),
        ),
        (
            "images",
            Path | None,
            option(help="folder of the unpacked vgr_vga_images.zip", type=Path),
        ),
        *(
            (
                config,
                Path | None,
                option(help=f"folder of a download of {hub_id} (data/*.parquet)", type=Path),
            )
            for config, hub_id in ORDER_SOURCES.items()
        ),
        ("out", Path, out_folder()),
    ],
    frozen=True,
    kw_only=True,
)
"""The options of ``python -m builders aro`` (one folder option per Order config)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``aro``: the VG-Relation / VG-Attribution JSON files + images -> dataset repo."""
    p = sub.add_parser("aro", help="build a dataset repo from ARO's files (VG tasks, Order tasks)")
    add_field_options(p, AroOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    order = {config: getattr(args, config) for config in ORDER_SOURCES}
    return run_cli(
        build_aro, "ARO", (args.annotations, args.images, args.out, order), args.out, BUILDER
    )
