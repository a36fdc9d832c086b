"""Entry points of ``bla-eval analyze``, ``bla-eval compare`` and ``bla-eval export``.

Each ``*_main(argv) -> int`` parses its own arguments. Errors print one line naming the bad value
and return 2 (no traceback unless ``--debug``); nothing is left half-written.
"""

from __future__ import annotations

import argparse

from bla_metric.formulas import MAX_RESAMPLES

from ..cli_common import OneLineParser, bounded_int, run_guarded
from .compare import DEFAULT_RESAMPLES

MAX_EXAMPLES = 100
"""The most extreme cases ``analyze --examples`` shows per outcome and task."""
MAX_SEED = 2**32 - 1
"""The largest bootstrap seed."""


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    p = OneLineParser(prog=prog, description=description)
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return p


def analyze_main(argv: list[str] | None = None) -> int:
    """``bla-eval analyze RUN_DIR``: the thesis' chapter-7 analyses into RUN_DIR/analysis/."""
    p = _parser(
        "bla-eval analyze",
        "Analyses of a finished run (thesis ch. 7): pairwise and "
        "per-verb tables, noun order, regression, extreme cases.",
    )
    p.add_argument("run_dir", help="folder of a finished bla-eval run (results.json)")
    p.add_argument(
        "--data", default=None, help="dataset the run scored (default: the one in results.json)"
    )
    p.add_argument("--output", default=None, help="folder to write (default: RUN_DIR/analysis)")
    p.add_argument(
        "--examples",
        type=bounded_int(0, MAX_EXAMPLES),
        default=3,
        help=f"extreme cases shown per outcome and task (default 3, at most {MAX_EXAMPLES})",
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
    from ..tables import TABLE_FORMATS
    from . import leaderboard as board

    p = _parser(
        "bla-eval compare",
        "Compare two or more runs on the same datapoints: paired tests (two runs), and a "
        "leaderboard with confidence sets for ranks, the set of runs that may be best, groups not "
        "separated and the smallest detectable difference.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="folders of finished runs (two or more)")
    p.add_argument(
        "--output",
        default=None,
        help="folder for compare.md/.json/.csv, leaderboard.csv and leaderboard.png",
    )
    p.add_argument(
        "--resamples",
        type=bounded_int(1, MAX_RESAMPLES),
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap resamples (default {DEFAULT_RESAMPLES}, at most {MAX_RESAMPLES})",
    )
    p.add_argument(
        "--seed",
        type=bounded_int(0, MAX_SEED),
        default=0,
        help=f"bootstrap seed, 0 to {MAX_SEED} (default 0)",
    )
    p.add_argument(
        "--table-format",
        choices=TABLE_FORMATS,
        default=None,
        help="print the tables with one number per cell in this format instead of the report",
    )
    p.add_argument(
        "--metric",
        default=None,
        help="what the leaderboard ranks by: one of the benchmark's leaderboard metrics (BLA: "
        f"{', '.join(board.METRICS)}; default: the first, else the benchmark's headline)",
    )
    p.add_argument(
        "--rank-sets",
        choices=board.RANK_SETS,
        default=board.RANK_SETS[0],
        help="confidence sets for ranks: simultaneous (all hold together, the default) or "
        "marginal (each on its own)",
    )
    p.add_argument(
        "--cluster",
        choices=board.CLUSTERS,
        default=None,
        help="the leaderboard's resamples draw whole clusters of datapoints sharing this "
        "dataset column (AP's predicate; tasks without it resample datapoints)",
    )
    p.add_argument(
        "--data",
        default=None,
        help="dataset the runs scored, for --cluster (default: the one in results.json)",
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
    from .export import FORMATS

    p = _parser("bla-eval export", "Write a run's results in the Hub's formats.")
    p.add_argument(
        "run_dir",
        metavar="RUN_DIR",
        help="a bla-eval run folder, or an inspect-ai log of a BLA task (.eval, .json) or a "
        "folder of them",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="eval-results",
        dest="fmt",
        help="eval-results (.eval_results/bla.yaml) or model-index (model card YAML)",
    )
    p.add_argument("--output", default=None, help="folder to write into (default: the run folder)")
    p.add_argument(
        "--dataset-id",
        default=None,
        help="Hub dataset id of the benchmark (default: the run's, else the public one)",
    )
    p.add_argument("--source-url", default=None, help="link to the run's logs (optional)")
    p.add_argument(
        "--push",
        action="store_true",
        help="open a pull request on the model repo (needs network and a token)",
    )
    p.add_argument(
        "--repo-id",
        default=None,
        help="the model repo, e.g. ORG/MODEL: --push opens the pull request there, and the "
        "entries' source.url links the run's Every Eval Ever record in it",
    )
    p.add_argument("--dry-run", action="store_true", help="with --push: print the call only")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="export a partial run (--limit, inspect's --limit or --sample-id); the notes say so",
    )
    p.add_argument(
        "--scores",
        default=None,
        metavar="ORG/RESULTS",
        help="Hub dataset repo of the run's per-datapoint scores, named in the notes; with "
        "--push they are committed there too",
    )
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
