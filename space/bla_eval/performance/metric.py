"""Speed of the metric's formulas on synthetic scores.

Run ``python -m bla_eval.performance.metric [--n 100000] [--repeats 3]``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bla_metric.formulas import compute
from bla_metric.tasks import get_task

from ..cli_common import option
from .options import parse_options


def synthetic(n: int, seed: int = 0) -> tuple[list[list[float]], list[list[int]]]:
    """``n`` datapoints of four random scores (python lists, as evaluate hands them over)."""
    scores = np.random.default_rng(seed).random((n, 4)).tolist()
    return scores, [[1, 1, 0, 0]] * n


def time_compute(n: int, repeats: int = 3, **kwargs) -> float:
    """Best wall-clock time in seconds of ``compute`` on ``n`` synthetic datapoints."""
    scores, labels = synthetic(n)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        compute(scores, labels, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best


CASES: dict[str, dict] = {
    "ranking": {},
    "ranking + pairwise": {"caption_types": list(get_task("ap").caption_types)},
    "binary, threshold 0.5": {"mode": "binary", "threshold": 0.5},
    "binary, top_k": {"mode": "binary", "threshold": "top_k"},
}


@dataclass(frozen=True, kw_only=True)
class MetricOptions:
    """The options of ``python -m bla_eval.performance.metric``."""

    n: int = option(100_000, "number of datapoints", type=int)
    repeats: int = option(3, "runs per case (best is shown)", type=int)


def main(argv: list[str] | None = None) -> None:
    """Print the best time of each case of ``CASES``."""
    args = parse_options(MetricOptions, "bla_eval.performance.metric", __doc__, argv)
    for name, kwargs in CASES.items():
        seconds = time_compute(args.n, args.repeats, **kwargs)
        print(f"{name:24s} {args.n:>9,d} datapoints  {seconds:.3f} s")


if __name__ == "__main__":
    main()
