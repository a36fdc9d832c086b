"""SugarCrepe -> dataset repo: ``python -m builders sugarcrepe --annotations DIR --images DIR
--out DIR``.

Reads the authors' release (RAIVNLab/sugar-crepe, ``data/<subset>.json``: an object of items
``{"filename", "caption", "negative_caption"}`` by id) and the COCO 2017 validation images
(``val2017/<filename>``). One config per subset, split ``test``; ``captions`` = [positive,
negative], ``labels`` = [1, 0]. Items whose image is missing are left out and counted. The
SugarCrepe++ builder (:mod:`builders.sugarcrepe_pp`) shares :func:`build_coco_captions`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options

from bla_metric.neighbours.sugarcrepe import SUGARCREPE_SUBSETS
from builders.neighbours import (
    BuildError,
    ConfigRows,
    ImageStore,
    RepoText,
    UniqueIds,
    build_repo,
    input_path,
    inside,
    item_id,
    out_folder,
    read_json,
    run_cli,
    sha256_text,
    text_field,
)

BUILDER = "python -m builders sugarcrepe"

CITATION = r"""@inproceedings{hsieh2023sugarcrepe,
    title = {SugarCrepe: Fixing Hackable Benchmarks for Vision-Language Compositionality},
    author = {Hsieh, Cheng-Yu and Zhang, Jieyu and Ma, Zixian and Kembhavi, Aniruddha and
              Krishna, Ranjay},
    booktitle = {Advances in Neural Information Processing Systems (Datasets and Benchmarks)},
    year = {2023},
}"""

TEXT = RepoText(
    benchmark="sugarcrepe",
    pretty_name="SugarCrepe",
    intro=(
        "SugarCrepe (Hsieh et al., NeurIPS 2023): a COCO 2017 validation image with a positive "
        "caption and a hard negative made by replacing, swapping or adding an object, attribute "
        "or relation. Converted from the authors' data/<subset>.json (RAIVNLab/sugar-crepe)."
    ),
    licence="The annotations are the authors' (MIT, RAIVNLab/sugar-crepe); the images are "
    "COCO's (their Flickr licences, CC BY 4.0 annotations).",
    licenses=("mit",),
    citation=CITATION,
    config_titles=dict(SUGARCREPE_SUBSETS),
)


def read_subset(path: Path, positives: Sequence[str]) -> list[tuple[str, dict]]:
    """(id, record) of one subset file: an object by id (SugarCrepe; a key given twice is
    refused) or a list of objects with an ``id`` (SugarCrepe++: an integer or a string, each
    once, ``1`` and ``"1"`` the same); each with ``filename``, the ``positives`` and
    ``negative_caption`` as non-empty strings (errors name the file and the item)."""
    data = read_json(path)
    if isinstance(data, dict):
        pairs = list(data.items())
    elif isinstance(data, list):
        pairs = [
            (item_id(v.get("id"), f"{path} item {n}") if isinstance(v, dict) else f"{n}", v)
            for n, v in enumerate(data)
        ]
    else:
        raise BuildError(f"{path}: expected an object or a list of items")
    ids = UniqueIds()
    for key, record in pairs:
        where = f"{path} item {key}"
        ids.add(key, where)
        if not isinstance(record, dict):
            raise BuildError(f"{where}: expected an object")
        for name in ("filename", *positives, "negative_caption"):
            text_field(record, name, where)
    if not pairs:
        raise BuildError(f"{path}: no item")
    return pairs


def build_coco_captions(
    text: RepoText,
    builder: str,
    subsets: Mapping[str, str],
    positives: Sequence[str],
    annotations: Path,
    images: Path,
    out: Path,
) -> tuple[dict, dict[str, ConfigRows]]:
    """One config per subset file ``<annotations>/<subset>.json`` found (at least one), each
    item's COCO image from ``images``; captions = the ``positives``, then the negative."""
    annotations, images = Path(annotations), Path(images)
    if not annotations.is_dir():
        raise BuildError(f"--annotations {annotations} is not a folder")
    if not images.is_dir():
        raise BuildError(f"--images {images} is not a folder")
    files = {s: annotations / f"{s}.json" for s in subsets if (annotations / f"{s}.json").is_file()}
    if not files:
        names = ", ".join(f"{s}.json" for s in subsets)
        raise BuildError(f"--annotations {annotations} holds none of {names}")
    store = ImageStore()
    configs: dict[str, ConfigRows] = {}
    for subset, path in files.items():
        part = configs.setdefault(subset, ConfigRows())
        for key, record in read_subset(path, positives):
            image = inside(images, record["filename"], f"{path} item {key}")
            if not image.is_file():
                part.missing_images += 1
                if len(part.missing_examples) < 3:
                    part.missing_examples.append(record["filename"])
                continue
            texts = [record[p] for p in positives] + [record["negative_caption"]]
            part.rows.append(
                {
                    "id": key,
                    "image": {"bytes": store.get(image, f"{path} item {key}"), "path": image.name},
                    "captions": texts,
                    "labels": [1] * len(positives) + [0],
                    "caption_types": [*positives, "negative_caption"],
                    "filename": record["filename"],
                }
            )
    hashes = {f"annotations/{p.name}": sha256_text(p) for p in files.values()}
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    return build_repo(out, text, configs, hashes, builder), configs


def build_sugarcrepe(
    annotations: Path, images: Path, out: Path
) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the SugarCrepe repo at ``out``; returns (manifest, rows and counts per config)."""
    return build_coco_captions(
        TEXT, BUILDER, SUGARCREPE_SUBSETS, ("caption",), annotations, images, out
    )


@dataclass(frozen=True, kw_only=True)
class SugarCrepeOptions:
    """The options of ``python -m builders sugarcrepe`` (and ``sugarcrepe-pp``'s)."""

    annotations: Path = input_path("the data folder of RAIVNLab/sugar-crepe (<subset>.json)")
    images: Path = input_path(
        "folder of the COCO 2017 validation images (val2017/000000xxxxxx.jpg)"
    )
    out: Path = out_folder()


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``sugarcrepe``: data/<subset>.json + COCO images -> dataset repo."""
    p = sub.add_parser("sugarcrepe", help="build a dataset repo from SugarCrepe's data folder")
    add_field_options(p, SugarCrepeOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(
        build_sugarcrepe, "SugarCrepe", (args.annotations, args.images, args.out), args.out, BUILDER
    )
