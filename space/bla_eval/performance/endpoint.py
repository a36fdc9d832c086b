"""Throughput of the ``openai-api`` kind against a running endpoint, at several concurrencies.

Run ``python -m bla_eval.performance.endpoint --endpoint URL --model NAME [--limit 10]
[--concurrency 1 8] [--text-only]``. Each concurrency scores the same items into a fresh
temporary run folder (so nothing comes from the response cache) and prints datapoints per second
of scoring (model set-up and data loading excluded).
"""

from __future__ import annotations

import tempfile
from dataclasses import MISSING, dataclass
from pathlib import Path

from ..api.settings import DEFAULT_CONCURRENCY
from ..cli_common import option
from ..config import RunConfig
from ..run import evaluate
from .options import data_option, parse_options


def throughput(config: RunConfig) -> tuple[int, float, float]:
    """(datapoints scored, scoring seconds, datapoints per second) of one run of ``config``."""
    timings = evaluate(config)["timings"]
    points, seconds = timings["datapoints_scored"], timings["scoring_s"]
    return points, seconds, points / seconds if seconds else float("inf")


@dataclass(frozen=True, kw_only=True)
class EndpointOptions:
    """The options of ``python -m bla_eval.performance.endpoint``."""

    endpoint: str = option(MISSING, "API base URL or provider shortcut")
    model: str = option(MISSING, "the model name the server knows")
    data: str | None = data_option("dataset folder (default: bla-eval's)")
    tasks: tuple[str, ...] = option(("ap", "co", "rc"), "tasks to score")
    limit: int = option(10, "datapoints per task", type=int)
    concurrency: tuple[int, ...] = option((1, DEFAULT_CONCURRENCY), "levels", type=int)
    text_only: bool = option(False, "send no image")


def main(argv: list[str] | None = None) -> None:
    """Print one line per concurrency."""
    args = parse_options(EndpointOptions, "bla_eval.performance.endpoint", __doc__, argv)
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
