"""Entry points of ``bla-eval analyze``, ``bla-eval compare`` and ``bla-eval export``.

Each ``*_main(argv) -> int`` parses its own arguments. Errors print one line naming the bad value
and return 2 (no traceback unless ``--debug``); nothing is left half-written.
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass

from bla_metric.formulas import MAX_RESAMPLES

from ..cli_common import bounded_int, command_parser, option, run_guarded
from ..config import registry
from ..tables import TABLE_FORMATS
from . import leaderboard as board
from .compare import DEFAULT_RESAMPLES

MAX_EXAMPLES = 100
"""The most extreme cases ``analyze --examples`` shows per outcome and task."""
MAX_SEED = 2**32 - 1
"""The largest bootstrap seed."""


@dataclass(frozen=True, kw_only=True)
class AnalyzeOptions:
    """The options of ``bla-eval analyze``."""

    run_dir: str = option(
        MISSING, "folder of a finished bla-eval run (results.json)", flag="run_dir"
    )
    data: str | None = option(help="dataset the run scored (default: the one in results.json)")
    output: str | None = option(help="folder to write (default: RUN_DIR/analysis)")
    examples: int = option(
        3,
        f"extreme cases shown per outcome and task (at most {MAX_EXAMPLES})",
        type=bounded_int(0, MAX_EXAMPLES),
    )


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """The options of ``bla-eval compare``."""

    runs: tuple[str, ...] = option(
        MISSING, "folders of finished runs (two or more)", flag="runs", metavar="RUN"
    )
    output: str | None = option(
        help="folder for compare.md/.json/.csv, leaderboard.csv and leaderboard.png"
    )
    resamples: int = option(
        DEFAULT_RESAMPLES,
        f"bootstrap resamples (at most {MAX_RESAMPLES})",
        type=bounded_int(1, MAX_RESAMPLES),
    )
    seed: int = option(0, f"bootstrap seed, 0 to {MAX_SEED}", type=bounded_int(0, MAX_SEED))
    table_format: str | None = option(
        help="print the tables with one number per cell in this format instead of the report",
        choices=TABLE_FORMATS,
    )
    metric: str | None = option(
        help="what the leaderboard ranks by: one of the benchmark's leaderboard metrics (BLA: "
        f"{', '.join(board.METRICS)}; default: the first, else the benchmark's headline)"
    )
    rank_sets: str = option(
        board.RANK_SETS[0],
        "confidence sets for ranks: simultaneous (all hold together) or marginal (each on its own)",
        choices=board.RANK_SETS,
    )
    cluster: str | None = option(
        help="the leaderboard's resamples draw whole clusters of datapoints sharing this "
        "dataset column (AP's predicate; tasks without it resample datapoints)",
        choices=board.CLUSTERS,
    )
    data: str | None = option(
        help="dataset the runs scored, for --cluster (default: the one in results.json)"
    )


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """The options of ``bla-eval export``."""

    run_dir: str = option(
        MISSING,
        "a bla-eval run folder, or an inspect-ai log of a BLA task (.eval, .json) or a folder "
        "of them",
        flag="run_dir",
        metavar="RUN_DIR",
    )
    fmt: str = option(
        "eval-results",
        "eval-results (.eval_results/bla.yaml) or model-index (model card YAML)",
        flag="--format",
        choices=registry("bla_eval.analysis.export:FORMATS"),
    )
    output: str | None = option(help="folder to write into (default: the run folder)")
    dataset_id: str | None = option(
        help="Hub dataset id of the benchmark (default: the run's, else the public one)"
    )
    source_url: str | None = option(help="link to the run's logs (optional)")
    push: bool = option(False, "open a pull request on the model repo (needs network and a token)")
    repo_id: str | None = option(
        help="the model repo, e.g. ORG/MODEL: --push opens the pull request there, and the "
        "entries' source.url links the run's Every Eval Ever record in it"
    )
    dry_run: bool = option(False, "with --push: print the call only")
    allow_partial: bool = option(
        False, "export a partial run (--limit, inspect's --limit or --sample-id); the notes say so"
    )
    scores: str | None = option(
        help="Hub dataset repo of the run's per-datapoint scores, named in the notes; with "
        "--push they are committed there too",
        metavar="ORG/RESULTS",
    )


def _parser(prog: str, description: str, options: type) -> argparse.ArgumentParser:
    return command_parser(prog, description, options)


def analyze_main(argv: list[str] | None = None) -> int:
    """``bla-eval analyze RUN_DIR``: the thesis' chapter-7 analyses into RUN_DIR/analysis/."""
    p = _parser(
        "bla-eval analyze",
        "Analyses of a finished run (thesis ch. 7): pairwise and "
        "per-verb tables, noun order, regression, extreme cases.",
        AnalyzeOptions,
    )
    args = p.parse_args(argv)

    def body() -> int:
        from .analyze import REPORT_FILE, analyze

        path, _ = analyze(args.run_dir, args.data, args.output, args.examples)
        print(f"wrote {path / REPORT_FILE}")
        return 0

    return run_guarded(body, args.debug, "bla-eval analyze")


def compare_main(argv: list[str] | None = None) -> int:
    """``bla-eval compare RUN RUN ...``: paired differences with bootstrap and McNemar tests, and
    a leaderboard with rank intervals and groups not separated."""
    p = _parser(
        "bla-eval compare",
        "Compare two or more runs on the same datapoints: paired tests (two runs), and a "
        "leaderboard with confidence sets for ranks, the set of runs that may be best, groups not "
        "separated and the smallest detectable difference.",
        CompareOptions,
    )
    args = p.parse_args(argv)
    if len(args.runs) < 2:
        p.error(f"compare needs at least two runs, got {len(args.runs)}")

    def body() -> int:
        from .compare import compare_many

        report, _ = compare_many(
            args.runs,
            args.output,
            args.resamples,
            args.seed,
            args.table_format,
            args.metric,
            args.rank_sets,
            args.cluster,
            args.data,
        )
        print(report, end="")
        return 0

    return run_guarded(body, args.debug, "bla-eval compare")


def export_main(argv: list[str] | None = None) -> int:
    """``bla-eval export RUN_DIR``: .eval_results/*.yaml or model-index YAML for the model repo."""
    p = _parser("bla-eval export", "Write a run's results in the Hub's formats.", ExportOptions)
    args = p.parse_args(argv)

    def body() -> int:
        from pathlib import Path

        from ..hub_auth import require_token
        from .export import PUSH_COMMAND, check_repo_id, export, push_call, record_for_push
        from .hub_scores import scores_location, scores_push_call
        from .rundata import load_run

        if args.push and not args.repo_id:
            raise ValueError("--push needs --repo-id (the model repo, e.g. ORG/MODEL)")
        if args.repo_id:
            check_repo_id(args.repo_id)  # as the real call checks it, --dry-run included
        if args.scores:
            check_repo_id(args.scores, "--scores")
        token = require_token(PUSH_COMMAND) if args.push and not args.dry_run else None
        location = scores_call = None
        if (
            args.scores
            and Path(args.run_dir).is_dir()
            and (Path(args.run_dir) / "results.json").exists()
        ):
            run = load_run(args.run_dir)
            location = scores_location(args.scores, run.results)
            scores_call = scores_push_call(args.scores, run.path, run.results)
        path, text = export(
            args.run_dir,
            args.fmt,
            args.output,
            args.dataset_id,
            args.source_url,
            args.allow_partial,
            location or args.scores,
            args.repo_id,
        )
        print(f"wrote {path}")
        calls = [(f"scores to {args.scores}", scores_call)] if args.push and scores_call else []
        if args.push:
            record = record_for_push(args.run_dir, args.fmt, path)
            calls.append((args.repo_id, push_call(args.fmt, args.repo_id, text, record)))
        for target, (source, call) in calls:
            if args.dry_run:
                print(source)
                continue
            try:
                done = call(token)
            except Exception as err:  # network, token or permission: one line, exit 2
                if args.debug:
                    raise
                raise ValueError(f"push to {target} failed: {err}") from None
            print(
                f"opened pull request {done}"
                if target == args.repo_id
                else f"pushed {target} ({done})"
            )
        return 0

    return run_guarded(body, args.debug, "bla-eval export")
