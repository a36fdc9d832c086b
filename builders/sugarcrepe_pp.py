"""SugarCrepe++ -> dataset repo: ``python -m builders sugarcrepe-pp --annotations DIR --images DIR
--out DIR``.

Reads the authors' Hub release (Aman-J/SugarCrepe_pp, text only, CC BY 4.0: ``data/<subset>.json``,
a list of ``{"id", "filename", "caption", "caption2", "negative_caption"}``) and the COCO 2017
validation images it names by file (``val2017/<filename>``), which the user provides. One config
per subset, split ``test``; ``captions`` = [caption, caption2, negative], ``labels`` = [1, 1, 0].
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options, field_like

from bla_metric.neighbours.sugarcrepe import SUGARCREPE_PP_SUBSETS
from builders.neighbours import ConfigRows, RepoText, run_cli
from builders.sugarcrepe import SugarCrepeOptions, build_coco_captions

BUILDER = "python -m builders sugarcrepe-pp"

CITATION = r"""@inproceedings{dumpala2024sugarcrepepp,
    title = {SUGARCREPE++ Dataset: Vision-Language Model Sensitivity to Semantic and Lexical
             Alterations},
    author = {Dumpala, Sri Harsha and Jaiswal, Aman and Sastry, Chandramouli and Milios,
              Evangelos and Oore, Sageev and Sajjad, Hassan},
    booktitle = {Advances in Neural Information Processing Systems (Datasets and Benchmarks)},
    year = {2024},
}"""

TEXT = RepoText(
    benchmark="sugarcrepe-pp",
    pretty_name="SugarCrepe++",
    intro=(
        "SugarCrepe++ (Dumpala et al., NeurIPS 2024): SugarCrepe's replace and swap items with a "
        "second, lexically different positive caption. Converted from the authors' Hub release "
        "Aman-J/SugarCrepe_pp (text only) and the COCO 2017 validation images it names."
    ),
    licence="The captions are CC BY 4.0 (Aman-J/SugarCrepe_pp); the images are COCO's.",
    licenses=("cc-by-4.0",),
    citation=CITATION,
    config_titles=dict(SUGARCREPE_PP_SUBSETS),
)


def build_sugarcrepe_pp(
    annotations: Path, images: Path, out: Path
) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the SugarCrepe++ repo at ``out``; returns (manifest, rows and counts per config)."""
    return build_coco_captions(
        TEXT,
        BUILDER,
        SUGARCREPE_PP_SUBSETS,
        ("caption", "caption2"),
        annotations,
        images,
        out,
    )


@dataclass(frozen=True, kw_only=True)
class SugarCrepePPOptions(SugarCrepeOptions):
    """The options of ``python -m builders sugarcrepe-pp``."""

    annotations: Path = field_like(
        SugarCrepeOptions,
        "annotations",
        help="the data folder of the Hub release Aman-J/SugarCrepe_pp (<subset>.json)",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``sugarcrepe-pp``: data/<subset>.json + COCO images -> dataset repo."""
    p = sub.add_parser("sugarcrepe-pp", help="build a dataset repo from SugarCrepe++'s JSON files")
    add_field_options(p, SugarCrepePPOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(
        build_sugarcrepe_pp,
        "SugarCrepe++",
        (args.annotations, args.images, args.out),
        args.out,
        BUILDER,
    )
