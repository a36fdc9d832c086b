"""Calibrate the grammar threshold on the release sentences (all of which passed GRUEN > 0.7).

Scores every release sentence with the configured scorer and picks, per task, the largest threshold
that keeps at least ``--keep`` of that task's release caption SETS (a set is kept when all four
sentences score above the threshold, the paper's rule); also the one threshold that does so for
all three tasks at once (the smallest of the three). Run:

    python -m builders calibrate --release path/to/BLA_Benchmark --out calib.json

``--scores calib.json`` reuses the sentence scores of an earlier run (no model is loaded). The
figures of a new scorer go into ``builders/data/grammar_calibration.json`` under its name.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import MISSING, dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options, field_like, option
from bla_eval.outputs import check_file_replaceable, write_marked_json

from bla_metric.tasks import TASKS
from builders.construct.cli import positive, share
from builders.construct.config import ConstructConfig
from builders.construct.grammar import make_scorer
from builders.records import read_main
from builders.source import ReleaseSource
from builders.validate import check_rows

COMMAND = "python -m builders calibrate"
"""The command named in the ``written_by`` key of its ``--out`` file (it replaces only those)."""


def release_sets(release: Path, limit: int | None = None) -> dict[str, list[list[str]]]:
    """Task config name -> the caption sets of the release (True1, True2, False1, False2), read
    and checked by the release reader (``records.read_main``), as the build reads them."""
    sets: dict[str, list[list[str]]] = {}
    with ReleaseSource(Path(release)) as source:
        for task in TASKS.values():
            main = read_main(source, task.config)
            check_rows("test", main)
            sets[task.config] = [list(dp.captions) for dp in main][:limit]
    return sets


def choose_threshold(set_minima: list[float], keep: float) -> float:
    """Largest threshold (rounded down to 0.01) under which >= ``keep`` of the sets survive.

    A set survives when its lowest sentence score is > threshold.
    """
    ordered = sorted(set_minima)
    may_drop = math.floor(len(ordered) * (1.0 - keep))
    if may_drop == 0:
        return round(math.floor(ordered[0] * 100) / 100 - 0.01, 2)
    threshold = math.floor(ordered[may_drop] * 100) / 100
    while sum(m > threshold for m in ordered) < keep * len(ordered):
        threshold -= 0.01
    return round(threshold, 2)


def score_release(sets: dict[str, list[list[str]]], config: ConstructConfig) -> dict:
    """Score every distinct release sentence; returns scores, scorer name and timings."""
    started = time.perf_counter()
    scorer = make_scorer(config)
    load_s = time.perf_counter() - started
    unique = {s for task in sets.values() for group in task for s in group}
    sentences = sorted(unique, key=lambda s: (len(s), s))  # similar lengths batch together
    started = time.perf_counter()
    scores = dict(zip(sentences, scorer.score(sentences), strict=True))
    return {
        "scorer": scorer.name,
        "sentence_scores": scores,
        "model_load_s": round(load_s, 1),
        "scoring_s": round(time.perf_counter() - started, 1),
    }


def calibrate(
    release: Path,
    config: ConstructConfig,
    keep: float,
    limit: int | None,
    previous: dict | None = None,
) -> dict:
    """Score the release (or reuse ``previous`` scores), choose the thresholds, return figures."""
    sets = release_sets(release, limit)
    scored = previous or score_release(sets, config)
    scores = scored["sentence_scores"]
    unscored = next((s for task in sets.values() for g in task for s in g if s not in scores), None)
    if unscored is not None:
        raise ValueError(
            f"the reused scores have no score for the release sentence {unscored!r}:"
            " were they computed on another release or with --limit?"
        )
    minima = {t: [min(scores[s] for s in g) for g in groups] for t, groups in sets.items()}
    per_task = {t: choose_threshold(ms, keep) for t, ms in minima.items()}
    single = min(per_task.values())
    values = [scores[s] for task in sets.values() for group in task for s in group]
    return {
        **scored,
        "target_keep_sets": keep,
        "unit": "caption sets (a set is kept when all 4 sentences score > threshold)",
        "thresholds": per_task,
        "kept_sets": {t: sum(m > per_task[t] for m in ms) / len(ms) for t, ms in minima.items()},
        "single_threshold": single,
        "kept_sets_single": {t: sum(m > single for m in ms) / len(ms) for t, ms in minima.items()},
        "kept_sentences_single": sum(v > single for v in values) / len(values),
        "n_sets": {t: len(ms) for t, ms in minima.items()},
        "n_unique_sentences": len(scores),
        "score_range": [min(values), max(values)],
    }


@dataclass(frozen=True, kw_only=True)
class CalibrateOptions:
    """The options of ``calibrate``; the scorer's are ``ConstructConfig``'s."""

    release: Path = option(MISSING, "BLA release folder or zip", type=Path)
    out: Path | None = option(help="write the figures here as JSON", type=Path)
    keep: float = option(0.95, "share of release sets to keep", type=share)
    limit: int | None = option(help="only the first N sets per task (quick check)", type=positive)
    scores: Path | None = option(help="reuse sentence scores from an earlier --out", type=Path)
    grammar_scorer: str = field_like(ConstructConfig, "grammar_scorer")
    grammar_model: str = field_like(ConstructConfig, "grammar_model")


def add_parser(subparsers) -> None:
    """Add the ``calibrate`` subcommand to an argparse subparsers object."""
    parser = subparsers.add_parser(
        "calibrate",
        help="calibrate the grammar threshold on the release sentences",
        description=__doc__.splitlines()[0],
    )
    add_field_options(parser, CalibrateOptions)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Calibrate, print the figures (without the sentence scores), write them to ``--out``."""
    config = ConstructConfig(grammar_scorer=args.grammar_scorer, grammar_model=args.grammar_model)
    previous = None
    if args.scores:
        try:
            loaded = json.loads(args.scores.read_text(encoding="utf-8"))
            previous = {
                k: loaded[k] for k in ("scorer", "sentence_scores", "model_load_s", "scoring_s")
            }
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"--scores {args.scores}: not the --out of an earlier calibration "
                f"({type(err).__name__}: {err})"
            ) from None
    if args.out is not None and args.out.is_dir() and not args.out.is_symlink():
        raise ValueError(f"--out {args.out} is a folder; give a file name")
    if args.out is not None:  # a new file, or one an earlier calibration wrote (its mark)
        check_file_replaceable(args.out, COMMAND)
    figures = calibrate(args.release, config, args.keep, args.limit, previous)
    if args.out:
        write_marked_json(args.out, COMMAND, figures)
    print(json.dumps({k: v for k, v in figures.items() if k != "sentence_scores"}, indent=2))
    return 0
