"""``bla-eval``: score a model on BLA from the command line (argument parsing only)."""

from __future__ import annotations

import argparse
import sys

from .data import HUB_DATASET_ID, TASKS
from .report import markdown_table
from .run import DEFAULT_TASKS, evaluate
from .scorers.detect import KINDS
from .scorers.dual import SIMILARITIES


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``bla-eval``."""
    p = argparse.ArgumentParser(
        prog="bla-eval", description="Score a vision-and-language (or text-only) model on BLA."
    )
    p.add_argument(
        "--model", required=True, help="Hub id, local folder, open_clip name or .gguf file"
    )
    p.add_argument("--output", required=True, help="folder for results.json and scores.jsonl")
    p.add_argument(
        "--data",
        default=None,
        help=f"Hub dataset id or local dataset folder (default: bla_dataset/ if built, "
        f"else {HUB_DATASET_ID})",
    )
    p.add_argument(
        "--tasks",
        nargs="+",
        default=list(DEFAULT_TASKS),
        choices=list(TASKS),
        help="active-passive, coordination, relative clause (default: all)",
    )
    p.add_argument("--split", default="test", help="dataset split (test = the whole benchmark)")
    p.add_argument(
        "--limit", type=int, default=None, help="score only the first N datapoints per task"
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="images / sentences / pairs per forward pass (halved on out-of-memory)",
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument(
        "--dtype",
        default=None,
        help="float32, float16 or bfloat16 (default: float32 on CPU, bfloat16 on CUDA)",
    )
    p.add_argument("--kind", choices=KINDS, default=None, help="override the detected model kind")
    p.add_argument(
        "--resume", action="store_true", help="keep scores.jsonl and score only the rest"
    )
    p.add_argument(
        "--trust-remote-code", action="store_true", help="allow the model repo's own code"
    )
    p.add_argument(
        "--similarity",
        choices=SIMILARITIES,
        default="cosine",
        help="dual encoders: cosine, or CLIPScore = 2.5 * max(cosine, 0) as in the paper",
    )
    p.add_argument("--gguf-file", default=None, help="GGUF file name inside --model (text kind)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval``."""
    args = build_parser().parse_args(argv)
    try:
        results = evaluate(
            args.model,
            args.output,
            data=args.data,
            tasks=args.tasks,
            split=args.split,
            limit=args.limit,
            batch_size=args.batch_size,
            device=args.device,
            dtype=args.dtype,
            kind=args.kind,
            resume=args.resume,
            trust_remote_code=args.trust_remote_code,
            similarity=args.similarity,
            gguf_file=args.gguf_file,
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"bla-eval: error: {err}", file=sys.stderr)
        return 2
    print(markdown_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
