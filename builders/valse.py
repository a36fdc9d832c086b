"""VALSE release -> dataset repo: ``python -m builders valse --annotations --images --out``.

One config per instrument JSON file of the release (``existence.json`` -> ``existence``), split
``test``. Each row is one image with ``captions = [caption, foil]``, ``labels = [1, 0]``, and the
instrument's metadata: the source dataset, the phenomenon, the (foil) classes, the three MTurk
votes, ``validated`` (at least two of three annotators chose the caption but not the foil: the
paper's final VALSE, §4.4) and every other field of the record as JSON in ``metadata``.

By default only validated items are written (the set the paper reports; the counts match its
§3); ``--all-candidates`` keeps every candidate. Images are looked up by the record's
``image_file`` under each ``--images`` folder; a Visual7W file ``v7w_<id>.jpg`` is also found as
``<id>.jpg`` (a flat Visual Genome folder, e.g. the BLA release's ``images/``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options, option

from bla_metric.neighbours.references import VALSE_INSTRUMENTS
from builders.neighbours import (
    BuildError,
    ConfigRows,
    ImageStore,
    RepoText,
    build_repo,
    first_existing,
    input_path,
    inside,
    out_folder,
    read_json,
    run_cli,
    sha256_text,
)

BUILDER = "python -m builders valse"

CITATION = r"""@inproceedings{parcalabescu-etal-2022-valse,
    title = "{VALSE}: A Task-Independent Benchmark for Vision and Language Models Centered on
             Linguistic Phenomena",
    author = "Parcalabescu, Letitia and Cafagna, Michele and Muradjan, Lilitta and Frank, Anette
              and Calixto, Iacer and Gatt, Albert",
    booktitle = "Proceedings of the 60th Annual Meeting of the Association for Computational
                 Linguistics (Volume 1: Long Papers)",
    year = "2022",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2022.acl-long.567",
}"""

TEXT = RepoText(
    benchmark="valse",
    pretty_name="VALSE: Vision And Language Structured Evaluation",
    intro=(
        "VALSE (Parcalabescu et al., ACL 2022) pairs each image with a caption and a foil that "
        "differs from it in one linguistic phenomenon (existence, plurality, counting, spatial "
        "relations, actions, coreference, noun phrases). A model should score the caption above "
        "the foil. Converted from the VALSE release (https://github.com/Heidelberg-NLP/VALSE); "
        "`captions` = [caption, foil], `labels` = [1, 0]."
    ),
    licence=(
        "Annotations: MIT (VALSE release). Images keep the licences of their sources (Visual7W / "
        "Visual Genome CC BY 4.0, MS COCO, SWiG, VisDial); their original bytes are embedded."
    ),
    licenses=("mit", "other"),
    citation=CITATION,
    config_titles=dict(VALSE_INSTRUMENTS),
)

_KNOWN = {
    "caption",
    "foil",
    "image_file",
    "dataset",
    "linguistic_phenomena",
    "classes",
    "classes_foil",
    "mturk",
}


def config_name(path: Path) -> str:
    """Config of an instrument file: its stem with ``-`` -> ``_`` (``counting-hard``)."""
    return path.stem.replace("-", "_")


def image_candidates(roots: list[Path], image_file: str, where: str) -> list[Path]:
    """Where the record's image may be: its file name under each root (checked to stay there)."""
    names = [image_file]
    if image_file.startswith("v7w_"):
        names.append(image_file[len("v7w_") :])  # Visual7W file name carries the VG id
    return [inside(root, name, where) for root in roots for name in names]


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _votes(record: dict, where: str) -> tuple[int, int, int]:
    mturk = record.get("mturk")
    if not isinstance(mturk, dict):
        raise BuildError(f"{where}: no 'mturk' votes")
    try:
        return tuple(int(mturk[k]) for k in ("caption", "foil", "other"))  # type: ignore[return-value]
    except (KeyError, TypeError, ValueError) as err:
        raise BuildError(f"{where}: 'mturk' needs integer caption/foil/other votes") from err


def read_instrument(
    path: Path, roots: list[Path], images: ImageStore, all_candidates: bool
) -> ConfigRows:
    data = read_json(path)
    if not isinstance(data, dict):
        raise BuildError(f"{path}: expected an object of records keyed by id")
    part = ConfigRows()
    instrument = config_name(path)
    not_validated = 0
    for key, record in data.items():
        where = f"{path} record {key!r}"
        if not isinstance(record, dict):
            raise BuildError(f"{where}: not an object")
        for name in ("caption", "foil", "image_file"):
            if not isinstance(record.get(name), str) or not record[name].strip():
                raise BuildError(f"{where}: '{name}' must be a non-empty string")
        votes = _votes(record, where)
        validated = votes[0] >= 2
        # 24 candidates have caption == foil; the validation rejected all of them
        if validated and record["caption"] == record["foil"]:
            raise BuildError(f"{where}: caption and foil are the same text")
        if not validated and not all_candidates:
            not_validated += 1
            continue
        found = first_existing(image_candidates(roots, record["image_file"], where))
        if found is None:
            part.missing_images += 1
            if len(part.missing_examples) < 3:
                part.missing_examples.append(record["image_file"])
            continue
        part.rows.append(
            {
                "id": str(key),
                "image": {"bytes": images.get(found, where), "path": record["image_file"]},
                "captions": [record["caption"], record["foil"]],
                "labels": [1, 0],
                "caption_types": ["caption", "foil"],
                "image_file": record["image_file"],
                "instrument": instrument,
                "dataset": _text(record.get("dataset", "")),
                "linguistic_phenomena": _text(record.get("linguistic_phenomena", "")),
                "classes": _text(record.get("classes", "")),
                "classes_foil": _text(record.get("classes_foil", "")),
                "mturk_caption": votes[0],
                "mturk_foil": votes[1],
                "mturk_other": votes[2],
                "validated": validated,
                "metadata": json.dumps(
                    {k: v for k, v in record.items() if k not in _KNOWN},
                    sort_keys=True,
                    ensure_ascii=False,
                ),
            }
        )
    if not all_candidates:
        part.left_out["not validated"] = not_validated
    return part


def build_valse(
    annotations: Path, images: list[Path], out: Path, all_candidates: bool = False
) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the VALSE repo at ``out``; returns (manifest, rows and counts per config)."""
    annotations = Path(annotations)
    if not annotations.is_dir():
        raise BuildError(f"--annotations {annotations} is not a folder")
    for root in images:
        if not Path(root).is_dir():
            raise BuildError(f"--images {root} is not a folder")
    files = sorted(annotations.glob("*.json"))
    if not files:
        raise BuildError(f"--annotations {annotations} holds no instrument .json file")
    order = {name: i for i, name in enumerate(VALSE_INSTRUMENTS)}
    files.sort(key=lambda p: (order.get(config_name(p), len(order)), p.name))
    store = ImageStore()
    configs = {
        config_name(p): read_instrument(p, [Path(r) for r in images], store, all_candidates)
        for p in files
    }
    hashes = {f"annotations/{p.name}": sha256_text(p) for p in files}
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


@dataclass(frozen=True, kw_only=True)
class ValseOptions:
    """The options of ``python -m builders valse``."""

    annotations: Path = input_path("folder of the VALSE instrument files (existence.json, ...)")
    images: tuple[Path, ...] = input_path(
        "folder of the images by file name (repeatable; Visual7W's v7w_<id>.jpg is also found "
        "as <id>.jpg)",
        action="append",
    )
    out: Path = out_folder()
    all_candidates: bool = option(
        False, "keep the items the MTurk validation rejected too (column `validated`)"
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``valse``: VALSE instrument files + images -> dataset repo."""
    p = sub.add_parser("valse", help="build a dataset repo from the VALSE release")
    add_field_options(p, ValseOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(
        build_valse,
        "VALSE",
        (args.annotations, args.images, args.out, args.all_candidates),
        args.out,
        BUILDER,
    )
