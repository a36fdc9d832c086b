"""``bla-eval``: score a model from the command line (argument parsing and dispatch only).

``bla-eval --model ID --output DIR`` evaluates; ``bla-eval SUBCOMMAND ...`` runs one of
``SUBCOMMANDS``. Errors print one line naming the bad value and exit with code 2; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from .benchmarks import benchmark_names, get_benchmark
from .cli_common import OneLineParser, positive_int, run_guarded
from .config import PROTOCOLS, RunConfig
from .distributed import Processes
from .protocols import ORDERS
from .report import markdown_table
from .run import evaluate
from .scorers import kinds
from .scorers.dual import SIMILARITIES

SUBCOMMANDS: dict[str, str] = {
    "learning-report": "bla_eval.finetune.report:main",
    "analyze": "bla_eval.analysis.cli:analyze_main",  # analysis (H3)
    "compare": "bla_eval.analysis.cli:compare_main",  # analysis (H3)
    "export": "bla_eval.analysis.cli:export_main",  # analysis (H3)
}
"""Subcommand name -> ``module:function`` taking ``argv`` and returning an exit code."""


def split_tasks(values: list[str]) -> tuple[str, ...]:
    """``["ap", "co"]`` and ``["ap,co"]`` both -> ``("ap", "co")``."""
    return tuple(t for value in values for t in value.split(",") if t.strip())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``bla-eval`` (kinds and benchmarks from their registries)."""
    p = OneLineParser(
        prog="bla-eval",
        description="Score a vision-and-language (or text-only) model on BLA and its neighbours.",
        epilog="Subcommands: " + (", ".join(SUBCOMMANDS) or "none") + " (bla-eval SUB --help).",
    )
    p.add_argument("--model", required=True, help="Hub id, local folder, open_clip name or .gguf")
    p.add_argument("--output", required=True, help="folder for results.json and scores.jsonl")
    p.add_argument(
        "--benchmark",
        default="bla",
        choices=benchmark_names(),
        help="benchmark to score (default: bla)",
    )
    p.add_argument(
        "--data",
        default=None,
        help="Hub dataset id or local dataset folder (default: the benchmark's own; "
        "for bla: bla_dataset/ if built, else the Hub id)",
    )
    p.add_argument(
        "--tasks",
        nargs="+",
        default=[],
        help="tasks to score, e.g. 'ap co' or 'ap,co' (BLA: ap, co, rc or config "
        "names; default: all)",
    )
    p.add_argument("--split", default="test", help="dataset split (test = the whole benchmark)")
    p.add_argument(
        "--limit", type=positive_int, default=None, help="score only the first N items per task"
    )
    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help="sentences / pairs per model forward pass (default: the kind's; halved "
        "on out-of-memory)",
    )
    p.add_argument(
        "--images-per-batch",
        type=positive_int,
        default=32,
        help="distinct images decoded and scored together (default: 32)",
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument(
        "--dtype",
        default=None,
        help="float32, float16 or bfloat16 (default: float32 on CPU, bfloat16 on CUDA)",
    )
    p.add_argument("--kind", choices=kinds(), default=None, help="override the detected model kind")
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="zero-shot",
        help="evaluation protocol (default: zero-shot); icl-sd / icl-dd: in-context "
        "learning on the learning test splits (generative models, paper §6)",
    )
    p.add_argument(
        "--icl-order",
        choices=ORDERS,
        default="true-first",
        help="ICL: demonstration order (default: true-first; shuffled uses --icl-seed)",
    )
    p.add_argument("--icl-seed", type=int, default=0, help="ICL: seed of the shuffled order")
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
        help="dual encoders: cosine, or CLIPScore = 2.5 * max(cosine, 0) (the paper)",
    )
    p.add_argument("--gguf-file", default=None, help="GGUF file name inside --model (text kind)")
    p.add_argument(
        "--device-map",
        default=None,
        help="generative models: spread one model over the GPUs (auto)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    return p


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run configuration of parsed arguments (tasks checked against the benchmark)."""
    tasks = split_tasks(args.tasks)
    bench = get_benchmark(args.benchmark)
    for task in tasks:
        bench.resolve_task(task)
    return RunConfig(
        model=args.model,
        output_dir=args.output,
        benchmark=args.benchmark,
        data=args.data,
        tasks=tasks,
        split=args.split,
        limit=args.limit,
        batch_size=args.batch_size,
        images_per_batch=args.images_per_batch,
        device=args.device,
        dtype=args.dtype,
        kind=args.kind,
        resume=args.resume,
        trust_remote_code=args.trust_remote_code,
        similarity=args.similarity,
        gguf_file=args.gguf_file,
        protocol=args.protocol,
        icl_order=args.icl_order,
        icl_seed=args.icl_seed,
        device_map=args.device_map,
    )


def subcommand(name: str) -> Callable[[list[str]], int]:
    """The ``main(argv)`` of a subcommand of ``SUBCOMMANDS``."""
    module, function = SUBCOMMANDS[name].split(":")
    return getattr(importlib.import_module(module), function)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return subcommand(argv[0])(argv[1:])
    args = build_parser().parse_args(argv)

    def run() -> int:
        results = evaluate(config_from_args(args))
        if Processes.from_env().main:  # one table for a multi-process run
            print(markdown_table(results))
        return 0

    return run_guarded(run, args.debug, "bla-eval")


if __name__ == "__main__":
    sys.exit(main())
