"""``python -m builders construct``: build BLA caption sets from Visual Genome annotations."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from builders.construct.config import ConstructConfig

TASK_CHOICES = ("ap", "co", "rc")


def add_parser(subparsers) -> None:
    """Add the ``construct`` subcommand (handler in ``func``) to an argparse subparsers object."""
    defaults = ConstructConfig()
    parser = subparsers.add_parser(
        "construct",
        help="build caption sets from Visual Genome (the paper's pipeline)",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--vg", type=Path, required=True,
                        help="folder with VG v1.4 image_data/objects/attributes/relationships "
                             "(.json, .json.gz or .zip)")
    parser.add_argument("--task", choices=TASK_CHOICES, required=True)
    parser.add_argument("--out", type=Path, required=True, help="output dataset folder")
    parser.add_argument("--images", type=Path, help="folder with VG images <id>.jpg to embed")
    parser.add_argument("--limit", type=int, help="read only the first N images")
    parser.add_argument("--min-person-area", type=float, default=defaults.min_person_area)
    parser.add_argument("--min-object-area", type=float, default=defaults.min_object_area)
    parser.add_argument("--max-box-overlap", type=float, default=defaults.max_box_overlap)
    parser.add_argument("--unique-similarity", type=float,
                        default=defaults.unique_sbert_similarity)
    parser.add_argument("--dedup-similarity", type=float,
                        default=defaults.dedup_last_word_similarity)
    parser.add_argument("--max-sets-per-image", type=int, default=defaults.max_sets_per_image)
    parser.add_argument("--sbert-model", default=defaults.sbert_model,
                        help="sentence-transformers id or folder")
    parser.add_argument("--grammar-scorer", default=defaults.grammar_scorer)
    parser.add_argument("--grammar-model", default=defaults.grammar_model)
    parser.add_argument("--grammar-threshold", type=float, default=None,
                        help="one threshold for every task (default: the calibrated per-task "
                             f"values of the default scorer, {defaults.grammar_thresholds})")
    parser.add_argument("--transitive-verbs", type=Path, default=defaults.transitive_verbs)
    parser.add_argument("--positional-words", type=Path, default=defaults.positional_words)
    parser.add_argument("--body-parts", type=Path, default=defaults.body_parts)
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
    """Run the pipeline, write the dataset, print the step report."""
    from builders.construct.pipeline import construct
    from builders.construct.writer import write_result

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    config = config_from_args(args)
    result = construct(args.vg, args.task, config, limit=args.limit)
    manifest = write_result(result, args.task, args.out, args.images, config.to_json())
    print(result.report.table())
    print(json.dumps({"out": str(args.out), "configs": manifest["configs"],
                      "images_embedded": manifest["images_embedded"]}))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m builders.construct``) until ``builders/__main__`` exists."""
    parser = argparse.ArgumentParser(prog="python -m builders.construct")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)
