"""What Slurm says of the sweep's jobs, from its commands: the queue (``squeue``, always there)
and, where the cluster keeps job accounting, a finished job's final state (``sacct``); a
cluster without accounting is followed from the queue alone."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

from .runners import SLURM_JOB_RE

TIMEOUT_S = 30
ACTIVE = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
    }
)
"""States of a job that may still write its cell."""
STARTED = frozenset({"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT"})


def _run(argv: list[str]) -> str | None:
    """The command's stdout, or None when it is missing or fails."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def queue_states(jobs: Iterable[str] | None = None) -> dict[str, str] | None:
    """Job id (``12_3`` for a task of array 12) -> state of every job ``squeue`` still lists
    (those that ended lately included, with their final state), of ``jobs``' arrays or of the
    whole queue; None when ``squeue`` cannot be asked."""
    argv = ["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T"]
    bases = sorted({str(j).split("_")[0] for j in jobs or ()})
    if bases:
        argv.append("--jobs=" + ",".join(bases))
    out = _run(argv)
    if out is None:
        return None
    states = {}
    for line in out.splitlines():
        job, _, state = line.strip().partition("|")
        if job:
            states[job] = state.split()[0] if state.split() else "UNKNOWN"
    return states


def active_jobs() -> set[str] | None:
    """The ids of the jobs in the queue that may still write (None without ``squeue``)."""
    states = queue_states()
    if states is None:
        return None
    return {job for job, state in states.items() if state in ACTIVE}


def has_accounting() -> bool:
    """Whether ``sacct`` answers (a cluster with job accounting)."""
    return _run(["sacct", "--noheader", "--allocations", "--jobs=1", "--format=State"]) is not None


def final_state(job: str) -> str | None:
    """A finished job's state from the accounting (``CANCELLED``, ``TIMEOUT``, ...), or None."""
    out = _run(
        ["sacct", "--noheader", "--allocations", "--parsable2", f"--jobs={job}", "--format=State"]
    )
    words = (out or "").split()
    return words[0] if words else None


def cancel(jobs: Iterable[str]) -> None:
    """``scancel`` the jobs (those already ended are ignored by Slurm); an id that is not a Slurm
    job id (digits) is refused before the command runs: it would reach it as an option."""
    jobs = sorted(set(jobs))
    bad = [job for job in jobs if SLURM_JOB_RE.fullmatch(job) is None]
    if bad:
        raise ValueError(f"{bad[0][:40]!r} is no Slurm job id (digits): not cancelled")
    if jobs:
        _run(["scancel", *jobs])
