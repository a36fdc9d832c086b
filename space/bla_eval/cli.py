"""``bla-eval``: score a model from the command line (argument parsing and dispatch only).

``bla-eval --model ID --output DIR`` evaluates; ``bla-eval SUBCOMMAND ...`` runs one of
``SUBCOMMANDS``. Errors print one line naming the bad value and exit with code 2; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable

from .cli_common import command_parser, field_values, run_guarded, split_values
from .config import RunConfig

SUBCOMMANDS: dict[str, str] = {
    "learning-report": "bla_eval.finetune.report:main",
    "analyze": "bla_eval.analysis.cli:analyze_main",
    "compare": "bla_eval.analysis.cli:compare_main",
    "export": "bla_eval.analysis.cli:export_main",
    "reproduce": "bla_eval.reproduce:main",
    "robustness": "bla_eval.analysis.robustness:main",
    "sweep": "bla_eval.sweep.cli:main",
}
"""Subcommand name -> ``module:function`` taking ``argv`` and returning an exit code."""

split_tasks = split_values
"""``["ap", "co"]`` and ``["ap,co"]`` both -> ``("ap", "co")``."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``bla-eval``: one option per ``RunConfig`` field, and ``--debug``."""
    return command_parser(
        "bla-eval",
        "Score a vision-and-language (or text-only) model on BLA and its neighbours.",
        RunConfig,
        epilog="Subcommands: " + (", ".join(SUBCOMMANDS) or "none") + " (bla-eval SUB --help).",
    )


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run configuration of parsed arguments (tasks checked against the benchmark)."""
    from .benchmarks import get_benchmark

    config = RunConfig(**field_values(RunConfig, args))
    bench = get_benchmark(config.benchmark)
    for task in config.tasks:
        bench.resolve_task(task)
    return config


def subcommand(name: str) -> Callable[[list[str]], int]:
    """The ``main(argv)`` of a subcommand of ``SUBCOMMANDS``."""
    module, function = SUBCOMMANDS[name].split(":")
    return getattr(importlib.import_module(module), function)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        name, rest = argv[0], argv[1:]
        return run_guarded(lambda: subcommand(name)(rest), "--debug" in rest, f"bla-eval {name}")
    args = build_parser().parse_args(argv)

    def run() -> int:
        from .analysis.robustness import tables as robustness_tables
        from .distributed import Processes
        from .report import markdown_table, paper_tables
        from .run import evaluate
        from .tables import render

        config = config_from_args(args)
        if config.plot and importlib.util.find_spec("matplotlib") is None:
            raise ValueError("--plot needs matplotlib: pip install 'bla-benchmark[analysis]'")
        results = evaluate(config)
        if not Processes.from_env().main:  # one table for a multi-process run
            return 0
        if config.table_format is None:
            print(markdown_table(results))
            if extra := robustness_tables(results):  # a sweep's sensitivity, a control's gain
                print(extra)
        else:
            print(render(paper_tables(results), config.table_format), end="")
        if config.plot:
            from .analysis.run_plot import write_plot

            print(f"wrote {write_plot(results, config.output_dir)}")
        return 0

    return run_guarded(run, args.debug, "bla-eval")


if __name__ == "__main__":
    sys.exit(main())
