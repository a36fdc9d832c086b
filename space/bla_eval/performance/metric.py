"""Speed of the metric's formulas on synthetic scores.

Run ``python -m bla_eval.performance.metric [--n 100000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bla_metric.formulas import compute
from bla_metric.tasks import get_task


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


def main(argv: list[str] | None = None) -> None:
    """Print the best time of each case of ``CASES``."""
    parser = argparse.ArgumentParser(
        prog="python -m bla_eval.performance.metric", description=__doc__
    )
    parser.add_argument("--n", type=int, default=100_000, help="number of datapoints")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case (best is shown)")
    args = parser.parse_args(argv)
    for name, kwargs in CASES.items():
        seconds = time_compute(args.n, args.repeats, **kwargs)
        print(f"{name:24s} {args.n:>9,d} datapoints  {seconds:.3f} s")


if __name__ == "__main__":
    main()
