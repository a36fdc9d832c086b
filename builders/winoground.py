"""Winoground -> dataset repo: ``python -m builders winoground --examples FILE --images DIR --out``.

Reads the Hub release's layout (facebook/winoground, gated): ``data/examples.jsonl``, one JSON
object per line ``{"id", "image_0", "image_1", "caption_0", "caption_1", "tag",
"secondary_tag", "num_main_preds", "collapsed_tag"}``, and the images of ``data/images.zip``
unpacked into a folder (``<image_0>.png``; ``.jpg``/``.jpeg`` are accepted too). One config,
``winoground``, split ``test``, with the release's columns and both images embedded. Caption
``c`` belongs to image ``c``. Examples with an image missing are left out and counted.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options

from bla_metric.neighbours.references import WINOGROUND_CONFIG
from builders.neighbours import (
    BuildError,
    ConfigRows,
    ImageStore,
    RepoText,
    UniqueIds,
    build_repo,
    first_existing,
    input_path,
    inside,
    item_id,
    json_lines,
    out_folder,
    run_cli,
    sha256_text,
    text_field,
)

BUILDER = "python -m builders winoground"
EXTENSIONS = (".png", ".jpg", ".jpeg")

CITATION = r"""@inproceedings{thrush2022winoground,
    title = {Winoground: Probing Vision and Language Models for Visio-Linguistic
             Compositionality},
    author = {Thrush, Tristan and Jiang, Ryan and Bartolo, Max and Singh, Amanpreet and
              Williams, Adina and Kiela, Douwe and Ross, Candace},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
                 Recognition (CVPR)},
    year = {2022},
}"""

TEXT = RepoText(
    benchmark="winoground",
    pretty_name="Winoground",
    intro=(
        "Winoground (Thrush et al., CVPR 2022): each example has two images and two captions "
        "with the same words in a different order; caption 0 matches image 0 and caption 1 "
        "image 1. Converted from the gated Hub release facebook/winoground, whose licence "
        "agreement applies; only build this repo from a copy you may use, and keep it private."
    ),
    licence="The Winoground licence agreement of the Hub release (research use); not MIT.",
    licenses=("other",),
    citation=CITATION,
    config_titles={WINOGROUND_CONFIG: "all examples"},
)

_STRINGS = ("image_0", "image_1", "caption_0", "caption_1")
_TAGS = ("tag", "secondary_tag", "collapsed_tag")


def read_examples(path: Path) -> list[tuple[int, dict]]:
    """(line number, record) of every non-empty line (JSON Lines: a line ends at ``\\n``); ids
    (integers or strings) each once; errors name the file and the line."""
    records = []
    ids = UniqueIds()
    for number, record in json_lines(path):
        where = f"{path} line {number}"
        if not isinstance(record, dict) or "id" not in record:
            raise BuildError(f"{where}: expected an object with an 'id'")
        ids.add(item_id(record["id"], where), where)
        for name in _STRINGS:
            text_field(record, name, where)
        for name in _TAGS:
            text_field(record, name, where, required=False)
        if record["caption_0"] == record["caption_1"]:
            raise BuildError(f"{where}: the two captions are the same text")
        records.append((number, record))
    if not records:
        raise BuildError(f"--examples {path}: no example")
    return records


def build_winoground(examples: Path, images: Path, out: Path) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the Winoground repo at ``out``; returns (manifest, rows and counts per config)."""
    examples, images = Path(examples), Path(images)
    if not images.is_dir():
        raise BuildError(f"--images {images} is not a folder")
    store = ImageStore()
    part = ConfigRows()
    for number, record in read_examples(examples):
        where = f"{examples} line {number}"
        found = [
            first_existing(inside(images, record[k] + ext, where) for ext in EXTENSIONS)
            for k in ("image_0", "image_1")
        ]
        if None in found:
            part.missing_images += 1
            if len(part.missing_examples) < 3:
                part.missing_examples.append(record["image_0" if found[0] is None else "image_1"])
            continue
        num_main_preds = record.get("num_main_preds") or 0
        if isinstance(num_main_preds, bool) or not isinstance(num_main_preds, int):
            raise BuildError(f"{where}: 'num_main_preds' must be an integer")
        if not 0 <= num_main_preds < 2**31:
            raise BuildError(f"{where}: 'num_main_preds' {num_main_preds} is out of range")
        part.rows.append(
            {
                "id": str(record["id"]),
                "image_0": {"bytes": store.get(found[0], where), "path": found[0].name},
                "image_1": {"bytes": store.get(found[1], where), "path": found[1].name},
                "caption_0": record["caption_0"],
                "caption_1": record["caption_1"],
                "tag": text_field(record, "tag", where, required=False),
                "secondary_tag": text_field(record, "secondary_tag", where, required=False),
                "num_main_preds": num_main_preds,
                "collapsed_tag": text_field(record, "collapsed_tag", where, required=False),
            }
        )
    configs = {WINOGROUND_CONFIG: part}
    hashes = {f"annotations/{examples.name}": sha256_text(examples)}
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


@dataclass(frozen=True, kw_only=True)
class WinogroundOptions:
    """The options of ``python -m builders winoground``."""

    examples: Path = input_path("examples.jsonl of the Hub release (data/examples.jsonl)")
    images: Path = input_path("folder of the unpacked data/images.zip (<image_0>.png ...)")
    out: Path = out_folder()


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``winoground``: examples.jsonl + images -> dataset repo."""
    p = sub.add_parser("winoground", help="build a dataset repo from Winoground's examples.jsonl")
    add_field_options(p, WinogroundOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(
        build_winoground, "Winoground", (args.examples, args.images, args.out), args.out, BUILDER
    )
