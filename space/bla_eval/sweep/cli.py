"""``bla-eval sweep PLAN --output DIR``: every cell of a plan (models x benchmarks x protocols)
as an ordinary ``bla-eval`` run folder under DIR, on local worker processes, Ray or Slurm; then
the leaderboard of each benchmark and protocol.

Exit status: 0 when every cell is finished; 2 for an error before any cell ran (one line); else
10 + the number of failed cells (at most 110), each failure's line printed as it comes.
"""

from __future__ import annotations

import argparse
import importlib
import time
from dataclasses import MISSING, dataclass
from pathlib import Path

from ..cli_common import bounded_int, command_parser, option, run_guarded
from .slurm_executor import CLUSTERS, DEFAULT_SILENCE_S

EXECUTORS = ("local", "ray", "slurm")
ENGINES = {"ray": "ray", "slurm": "submitit"}
"""Executor -> the package of the ``sweep`` extra it needs."""
MAX_WORKERS = 1024
MAX_FAILED_SHOWN = 100
FAILED_BASE = 10
"""Exit status of a sweep with failed cells: this plus their number (capped)."""
DEFAULT_RESAMPLES = 1000
CANCEL_WAIT_S = 30
"""With ``--cancel-running``: how long past a record's staleness its runner may take to end."""


@dataclass(frozen=True, kw_only=True)
class SweepOptions:
    """The options of ``bla-eval sweep``."""

    plan: str = option(MISSING, "the plan (YAML; see docs/sweeps.md)", flag="plan", metavar="PLAN")
    output: str = option(MISSING, "the sweep folder (new, empty or a sweep's)")
    executor: str = option("local", "where the cells run", choices=EXECUTORS)
    workers: int = option(
        1,
        f"local: worker processes, each given one GPU in turn (at most {MAX_WORKERS})",
        type=bounded_int(1, MAX_WORKERS),
    )
    cpus_per_cell: int = option(
        1,
        "torch threads of each cell; Ray's num_cpus, Slurm's cpus-per-task",
        type=bounded_int(1, MAX_WORKERS),
    )
    gpus_per_cell: int = option(
        0, "ray: num_gpus of each task; slurm: GPUs of each job", type=bounded_int(0, 64)
    )
    address: str | None = option(
        help="ray: the cluster's address (default $RAY_ADDRESS, else a local instance)"
    )
    partition: str | None = option(help="slurm: the partition")
    time: int = option(
        60, "slurm: each job's time limit in minutes", type=bounded_int(1, 60 * 24 * 30)
    )
    cluster: str = option(
        "slurm",
        "slurm: submitit's cluster (local: the jobs as processes here, without Slurm)",
        choices=CLUSTERS,
    )
    resamples: int = option(
        DEFAULT_RESAMPLES,
        "bootstrap resamples of the leaderboards",
        type=bounded_int(1, 100_000),
    )
    max_silence: int = option(
        DEFAULT_SILENCE_S,
        "slurm: seconds a running cell may go without a heartbeat before its job is cancelled "
        "and the cell fails",
        type=bounded_int(10, 7 * 24 * 3600),
    )
    cancel_running: bool = option(
        False,
        "cancel the jobs of an earlier sweep that still run cells of this one (default: refuse "
        "to start while they run)",
    )
    quiet: bool = option(False, "no progress display")


def build_parser() -> argparse.ArgumentParser:
    return command_parser(
        "bla-eval sweep",
        "Run every cell of a plan (models x benchmarks x protocols) as a bla-eval run "
        "folder under --output, on local processes, Ray or Slurm; rerun to resume. Exit status "
        f"{FAILED_BASE} + the number of failed cells when some failed.",
        SweepOptions,
    )


def sweep(args: argparse.Namespace) -> int:
    """Run the plan's unfinished cells, print the leaderboards; the exit status."""
    from .folder import SweepFolder
    from .job import Job, Outcome
    from .plan import check_sources, read_plan
    from .progress import Events
    from .report import leaderboards

    if args.executor in ENGINES:  # a missing engine is named before anything is written
        importlib.import_module(ENGINES[args.executor])
    plan = read_plan(args.plan)
    folder = SweepFolder(args.output)
    folder.check_output()
    # a cell that cannot run (its data or model not found) stops the sweep before anything is
    # written or run
    check_sources([c for c in plan.cells if not folder.finished(c)])
    folder.path.mkdir(parents=True, exist_ok=True)
    with folder.lock():
        folder.check_output()  # again, now that no other sweep changes it
        folder.check_plan(plan)
        folder.record(plan)
        todo = [c for c in plan.cells if not folder.finished(c)]
        wait_for_runners(folder.path, [c.id for c in todo], args.cancel_running)
        held = {c.id: why for c in todo if (why := folder.held(c)) is not None}
        root = folder.path.absolute()  # the same folder on every node that sees it
        jobs = [
            Job(
                c.id,
                str(root / c.id),
                c.settings,
                folder.cell_path(c).exists(),
                args.cpus_per_cell,
                str(root),
            )
            for c in todo
            if c.id not in held
        ]
        events = Events(len(todo), len(plan.cells) - len(todo), show=not args.quiet)
        try:
            for cell, why in held.items():  # a live process runs it: never started twice
                events.finished(Outcome(cell, why))
            execute(args, jobs, events, folder.path)
        finally:
            events.close()
        failed = len(events.failed)
        print(
            f"{len(plan.cells)} cells: {len(todo) - failed} run now, "
            f"{len(plan.cells) - len(todo)} finished before, {failed} failed"
        )
        print(leaderboards(folder, plan.cells, args.resamples), end="")
    return FAILED_BASE + min(failed, MAX_FAILED_SHOWN) if failed else 0


def wait_for_runners(root: Path, cells: list[str], cancel_them: bool) -> None:
    """Refuse to start while runners of an earlier sweep may still write ``cells`` (their Slurm
    jobs in the queue, or their records refreshed lately), naming them in one line; with
    ``cancel_them``, cancel their Slurm jobs and wait until none is left."""
    from .runners import STALE_S, describe, live_runners
    from .slurm_queue import active_jobs, cancel

    live = live_runners(root, cells, active_jobs())
    if live and cancel_them:
        cancel(str(r["slurm_job"]) for r in live.values() if r.get("slurm_job"))
        deadline = time.monotonic() + STALE_S + CANCEL_WAIT_S
        while live and time.monotonic() < deadline:
            time.sleep(1)
            live = live_runners(root, list(live), active_jobs())
    if live:
        shown = "; ".join(f"{cell} ({describe(r)})" for cell, r in sorted(live.items()))
        more = (
            "they did not end after being cancelled"
            if cancel_them
            else ("wait for them to end, or rerun with --cancel-running")
        )
        raise ValueError(f"cells of {root} are still run by earlier jobs: {shown}: {more}")


def execute(args: argparse.Namespace, jobs: list, events, root: Path) -> None:
    """Hand ``jobs`` to the executor ``args`` chose."""
    if not jobs:
        return
    if args.executor == "ray":
        from .ray_executor import run_ray

        run_ray(jobs, events, args.address, args.cpus_per_cell, args.gpus_per_cell)
    elif args.executor == "slurm":
        from .folder import LOGS
        from .slurm_executor import run_slurm

        run_slurm(
            jobs,
            events,
            root / LOGS,
            args.cluster,
            args.partition,
            args.time,
            args.cpus_per_cell,
            args.gpus_per_cell,
            args.max_silence,
        )
    else:
        from .local_executor import run_local

        run_local(jobs, events, args.workers)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval sweep``."""
    args = build_parser().parse_args(argv)
    return run_guarded(lambda: sweep(args), args.debug, "bla-eval sweep")
