"""Commands a test only waits for, started in the background when the session's collection ends.

A test whose work is one long command in another environment (the version tiers) registers it
here from its module (``register``); ``tests/conftest.py`` starts every registered command whose
test the session selected as soon as collection is done, at a low priority, so that it runs
beside the rest of the suite instead of after it; the test then waits for its result
(``result``). Output goes to files, never pipes (nobody reads them until the end), in the
session's scratch folder. Whatever still runs when the session ends is stopped.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NICE = 10
"""Priority of a background command: the tests in the foreground come first."""


@dataclass
class Job:
    """One background command: what starts it, its process and its output files."""

    argv: Callable[[Path], list[str]]
    env: Callable[[], dict[str, str]]
    cwd: Path
    process: subprocess.Popen | None = None
    stdout: Path | None = None
    stderr: Path | None = None


JOBS: dict[str, Job] = {}
"""Registered commands by test node id (``tests/test_version_tiers.py::...[lowest-3.10]``)."""
SCRATCH: list[Path] = []
"""The session's scratch folder, once ``start_selected`` is told it."""


def register(
    nodeid: str, argv: Callable[[Path], list[str]], env: Callable[[], dict[str, str]], cwd: Path
) -> None:
    """Run ``argv(folder)`` in the background when test ``nodeid`` is selected (``folder``: an
    empty folder of its own)."""
    JOBS[nodeid] = Job(argv, env, cwd)


def start_selected(nodeids: list[str], scratch: Path) -> None:
    """Start the registered commands of the selected tests."""
    SCRATCH[:] = [scratch]
    selected = set(nodeids)
    for nodeid, job in JOBS.items():
        if nodeid in selected and job.process is None:
            _start(job)


def _start(job: Job) -> None:
    root = SCRATCH[0] if SCRATCH else Path(tempfile.mkdtemp(prefix="bla-background-"))
    folder = Path(tempfile.mkdtemp(prefix="job-", dir=root))
    job.stdout, job.stderr = folder / "stdout.txt", folder / "stderr.txt"
    with job.stdout.open("w") as out, job.stderr.open("w") as err:
        job.process = subprocess.Popen(
            ["nice", "-n", str(NICE), *job.argv(folder / "work")],
            cwd=job.cwd,
            env=job.env(),
            stdout=out,
            stderr=err,
            text=True,
        )


def result(nodeid: str, timeout: float) -> subprocess.CompletedProcess:
    """The finished command of test ``nodeid`` (started now if the session did not start it)."""
    job = JOBS[nodeid]
    if job.process is None:
        _start(job)
    try:
        code = job.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        job.process.kill()
        job.process.wait()
        raise
    return subprocess.CompletedProcess(
        job.process.args, code, job.stdout.read_text(), job.stderr.read_text()
    )


def stop_all() -> None:
    """Stop every background command still running."""
    for job in JOBS.values():
        if job.process is not None and job.process.poll() is None:
            job.process.kill()
            job.process.wait()
