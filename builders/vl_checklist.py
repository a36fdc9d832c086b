"""VL-CheckList -> dataset repo: ``python -m builders vl-checklist --annotations --images --out``.

``--annotations``: the VL-CheckList folder (``data/<Object|Attribute|Relation>/...`` and
``corpus.json`` or ``vl_checklist/corpus.json``, as in a clone of om-ai-lab/VL-CheckList). One
config per taxonomy leaf (``object_size_large``, ``attribute_color``, ``relation_spatial``, ...:
the 13 leaves of upstream ``corpus.json``), split ``test``. A leaf gathers the annotation files
("corpora") that upstream's ``corpus.json`` lists for it, from every data source present (vg, vaw,
swig, hake); files it lists but the folder lacks are skipped and named in the summary. Each item
``[image path, {"POS": [...], "NEG": [...]}]`` becomes one row with ``captions = [POS[0], NEG[0]]``
(upstream evaluates ``texts[0]`` too).

Images: the annotation's path (``VG_100K/2385247.jpg``, ``VG_100K_2/...``, ``hcvrd/...``) is
looked up under each ``--images`` root as laid out upstream (``<root>/vg/<path>`` for vg and vaw,
``<root>/swig/<path>``, ``<root>/hake/<path>``), as ``<root>/<path>``, and for Visual Genome also
as a flat folder ``<root>/<id>.jpg``. Items whose image is found nowhere are counted per config.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bla_eval.cli_common import add_field_options

from bla_metric.neighbours.vl_checklist import VL_CHECKLIST_CORPUS, VL_CHECKLIST_LEAVES
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

BUILDER = "python -m builders vl-checklist"

IMAGE_ROOTS = {"vg": "vg", "vaw": "vg", "swig": "swig", "hake": "hake"}
"""Data source -> upstream ``IMG_ROOT`` folder (``corpus/**/*.yaml``)."""

CITATION = r"""@article{zhao2022vlchecklist,
    title = {VL-CheckList: Evaluating Pre-trained Vision-Language Models with Objects,
             Attributes and Relations},
    author = {Zhao, Tiancheng and Zhang, Tianqi and Zhu, Mingwei and Shen, Haozhan and
              Lee, Kyusong and Lu, Xiaopeng and Yin, Jianwei},
    journal = {arXiv preprint arXiv:2207.00221},
    year = {2022},
}"""

TEXT = RepoText(
    benchmark="vl-checklist",
    pretty_name="VL-CheckList",
    intro=(
        "VL-CheckList (Zhao et al., 2022) pairs each image with a positive text and a negative "
        "one that changes an object, an attribute or a relation; its taxonomy splits Object by "
        "size and location, Attribute by colour, material, size, state and action, Relation by "
        "action and spatial. A model should score the positive text above the negative. "
        "Converted from https://github.com/om-ai-lab/VL-CheckList; `captions` = [POS, NEG], "
        "`labels` = [1, 0], `corpus` = the upstream annotation file, `source` = its data source."
    ),
    licence=(
        'Annotations: VL-CheckList, "free for non-commercial use" (its setup.py). Images keep '
        "the licences of their sources (Visual Genome CC BY 4.0, SWiG, HAKE); their original "
        "bytes are embedded."
    ),
    licenses=("other",),
    citation=CITATION,
    config_titles={c: " / ".join(path) for c, (_, path) in VL_CHECKLIST_LEAVES.items()},
)

_OBJECT = re.compile(r"Object_(Size|Location)_([a-z]+)_(vg_obj|vg_subj|swig_[a-z]+|hake)$")


def corpus_file(corpus: str) -> PurePosixPath:
    """Upstream annotation file of a corpus name (the ``ANNO_PATH`` of its yaml, under data/)."""
    match = _OBJECT.match(corpus)
    if match:
        dim, value, who = match.groups()
        folder = f"data/Object/{dim}/{who.split('_')[0]}_{dim.lower()}"
        if who.startswith("swig_"):
            return PurePosixPath(f"{folder}/{who}/{who}_{value}.json")
        if who == "hake":
            return PurePosixPath(f"{folder}/hake_obj_{value}.json")
        return PurePosixPath(f"{folder}/{who}_{value}.json")
    kind, name, source = corpus.split("_")
    if kind == "Relation" and source != "vg":
        return PurePosixPath(f"data/Relation/{source}_{name}.json")
    return PurePosixPath(f"data/{kind}/{source}/{name}.json")


def image_candidates(roots: list[Path], source: str, path: str, where: str) -> list[Path]:
    """Where the item's image may be under each root, as laid out upstream or flat (each
    checked to stay inside its root)."""
    rel = PurePosixPath(path)
    names = [f"{IMAGE_ROOTS[source]}/{path}", path]
    if source in ("vg", "vaw"):
        names.append(rel.name)  # flat Visual Genome folder: <id>.jpg
    return [inside(root, name, where) for root in roots for name in names]


CORPUS_FILES = ("corpus.json", "vl_checklist/corpus.json")
"""Where the taxonomy file sits: beside data/, or where the upstream repository keeps it."""


def corpus_path(annotations: Path) -> Path | None:
    return next((annotations / p for p in CORPUS_FILES if (annotations / p).is_file()), None)


def check_corpus(annotations: Path) -> None:
    """The folder's ``corpus.json``, when there is one, must be upstream's taxonomy."""
    path = corpus_path(annotations)
    if path is not None and read_json(path) != VL_CHECKLIST_CORPUS:
        raise BuildError(
            f"{path}: differs from the VL-CheckList taxonomy this builder knows "
            "(om-ai-lab/VL-CheckList corpus.json)"
        )


def read_corpus(
    path: Path, corpus: str, source: str, roots: list[Path], images: ImageStore, part: ConfigRows
) -> None:
    data = read_json(path)
    if not isinstance(data, list):
        raise BuildError(f"{path}: expected a list of [image path, {{POS, NEG}}] items")
    for index, item in enumerate(data):
        where = f"{path} item {index}"
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or not isinstance(item[1], dict)
        ):
            raise BuildError(f'{where}: expected [image path, {{"POS": [...], "NEG": [...]}}]')
        image_path, texts = item
        pos, neg = texts.get("POS"), texts.get("NEG")
        for name, value in (("POS", pos), ("NEG", neg)):
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(t, str) and t.strip() for t in value)
            ):
                raise BuildError(f"{where}: {name} must be a non-empty list of texts")
        found = first_existing(image_candidates(roots, source, image_path, where))
        if found is None:
            part.missing_images += 1
            if len(part.missing_examples) < 3:
                part.missing_examples.append(image_path)
            continue
        part.rows.append(
            {
                "id": f"{corpus}-{index:05d}",
                "image": {
                    "bytes": images.get(found, where, f"{source}/{image_path}"),
                    "path": PurePosixPath(image_path).name,
                },
                "captions": [pos[0], neg[0]],
                "labels": [1, 0],
                "caption_types": ["POS", "NEG"],
                "image_path": image_path,
                "corpus": corpus,
                "source": source,
            }
        )


def build_vl_checklist(
    annotations: Path, images: list[Path], out: Path
) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the VL-CheckList repo at ``out``; returns (manifest, rows and counts per config)."""
    annotations = Path(annotations)
    if not (annotations / "data").is_dir():
        raise BuildError(f"--annotations {annotations} has no data/ folder (VL-CheckList layout)")
    roots = [Path(r) for r in images]
    for root in roots:
        if not root.is_dir():
            raise BuildError(f"--images {root} is not a folder")
    check_corpus(annotations)
    store = ImageStore()
    configs: dict[str, ConfigRows] = {}
    hashes: dict[str, str] = {}
    absent: list[str] = []
    for config, (key, _) in VL_CHECKLIST_LEAVES.items():
        part, seen = ConfigRows(), False
        for source, corpora in VL_CHECKLIST_CORPUS[key].items():
            for corpus in corpora:
                rel = corpus_file(corpus)
                path = annotations / rel
                if not path.is_file():
                    absent.append(str(rel))
                    continue
                seen = True
                hashes[f"annotations/{rel}"] = sha256_text(path)
                read_corpus(path, corpus, source, roots, store, part)
        if seen:
            configs[config] = part
    if not configs:
        raise BuildError(
            f"--annotations {annotations}: none of the upstream annotation files "
            "(data/Object/..., data/Attribute/..., data/Relation/...) is there"
        )
    corpus = corpus_path(annotations)
    if corpus is not None:
        hashes[f"annotations/{corpus.relative_to(annotations).as_posix()}"] = sha256_text(corpus)
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    manifest = build_repo(out, TEXT, configs, hashes, BUILDER)
    if absent:
        print(
            f"note: {len(absent)} annotation files of corpus.json are not in "
            f"{annotations} (e.g. {absent[0]}); their leaves use the files that are",
            file=sys.stderr,
        )
    return manifest, configs


@dataclass(frozen=True, kw_only=True)
class VlCheckListOptions:
    """The options of ``python -m builders vl-checklist``."""

    annotations: Path = input_path("VL-CheckList folder with data/ (and corpus.json)")
    images: tuple[Path, ...] = input_path(
        "image root (repeatable): upstream layout <root>/vg/VG_100K/<id>.jpg, <root>/swig/..., "
        "<root>/hake/..., or a flat Visual Genome folder <id>.jpg",
        action="append",
    )
    out: Path = out_folder()


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``vl-checklist``: VL-CheckList annotations + images -> dataset repo."""
    p = sub.add_parser("vl-checklist", help="build a dataset repo from VL-CheckList")
    add_field_options(p, VlCheckListOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(
        build_vl_checklist,
        "VL-CheckList",
        (args.annotations, args.images, args.out),
        args.out,
        BUILDER,
    )
