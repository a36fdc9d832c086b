"""Throughput of the ``openai-api`` kind against a running endpoint, at several concurrencies.

Run ``python -m bla_eval.performance.endpoint --endpoint URL --model NAME [--limit 10]
[--concurrency 1 8] [--text-only]``. Each concurrency scores the same items into a fresh
temporary run folder (so nothing comes from the response cache) and prints datapoints per second
of scoring (model set-up and data loading excluded).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..api.settings import DEFAULT_CONCURRENCY
from ..config import RunConfig
from ..run import evaluate


def throughput(config: RunConfig) -> tuple[int, float, float]:
    """(datapoints scored, scoring seconds, datapoints per second) of one run of ``config``."""
    timings = evaluate(config)["timings"]
    points, seconds = timings["datapoints_scored"], timings["scoring_s"]
    return points, seconds, points / seconds if seconds else float("inf")


def main(argv: list[str] | None = None) -> None:
    """Print one line per concurrency."""
    parser = argparse.ArgumentParser(
        prog="python -m bla_eval.performance.endpoint", description=__doc__
    )
    parser.add_argument("--endpoint", required=True, help="API base URL or provider shortcut")
    parser.add_argument("--model", required=True, help="the model name the server knows")
    parser.add_argument("--data", default=None, help="dataset folder (default: bla-eval's)")
    parser.add_argument("--tasks", nargs="+", default=["ap", "co", "rc"], help="tasks to score")
    parser.add_argument("--limit", type=int, default=10, help="datapoints per task")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1, DEFAULT_CONCURRENCY], help="levels"
    )
    parser.add_argument("--text-only", action="store_true", help="send no image")
    args = parser.parse_args(argv)
    for level in args.concurrency:
        with tempfile.TemporaryDirectory() as folder:
            config = RunConfig(
                args.model,
                Path(folder) / "run",
                data=args.data,
                tasks=tuple(args.tasks),
                limit=args.limit,
                endpoint=args.endpoint,
                concurrency=level,
                text_only=args.text_only,
            )
            points, seconds, rate = throughput(config)
        print(f"concurrency {level:>3}: {points} datapoints in {seconds:.2f} s = {rate:.2f} /s")


if __name__ == "__main__":
    main()
