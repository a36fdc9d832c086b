"""``--executor slurm``: one Slurm job per cell through submitit (partition, time limit, CPUs
and GPUs per cell); ``--cluster local`` runs the same jobs as processes here (submitit's local
executor), ``debug`` in this process. The jobs' logs go to ``.submitit`` in the sweep folder.

On Slurm the jobs are followed from the queue (``slurm_queue``), not through submitit's
accounting queries, so a cluster without ``sacct`` is followed too: a job that left the queue
without a result failed (its last state said), and a running cell silent for longer than the
bound (its runner record not refreshed) is cancelled and fails. Each failure is one line."""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .job import Job, Outcome, run_job
from .progress import Events, clipped
from .runners import age, record_path, write_record
from .slurm_queue import ACTIVE, STARTED, cancel, final_state, has_accounting, queue_states

CLUSTERS = ("slurm", "local", "debug")
POLL_S = 1.0
QUEUE_POLL_S = 5.0
"""How often the queue is asked."""
GONE_GRACE_S = 20.0
"""How long a result file may take to appear after its job left the queue (shared file systems
show a file to other nodes late)."""
DEFAULT_SILENCE_S = 600


def signal_margin(minutes: int) -> int:
    """Seconds before the time limit at which Slurm warns a job (submitit's ``--signal``): a
    tenth of the limit, at least 5 s and at most submitit's 90 s."""
    return max(5, min(90, minutes * 6))


def run_slurm(
    jobs: Sequence[Job],
    events: Events,
    logs: Path,
    cluster: str = "slurm",
    partition: str | None = None,
    minutes: int = 60,
    cpus: int = 1,
    gpus: int = 0,
    silence_s: float = DEFAULT_SILENCE_S,
) -> None:
    """Submit ``jobs`` as one job array and follow them until each ends."""
    import submitit

    executor = submitit.AutoExecutor(folder=str(logs), cluster=cluster)
    parameters: dict[str, object] = {
        "timeout_min": minutes,
        "cpus_per_task": cpus,
        "gpus_per_node": gpus,
        "tasks_per_node": 1,
        "nodes": 1,
        "name": "bla-eval-sweep",
    }
    if cluster == "slurm":
        parameters["slurm_signal_delay_s"] = signal_margin(minutes)
        if partition is not None:
            parameters["slurm_partition"] = partition
    executor.update_parameters(**parameters)
    submitted = submit(executor, jobs, cluster)
    host = os.uname().nodename
    for handle, job in zip(submitted, jobs, strict=True):
        if cluster == "slurm" and job.sweep:
            write_record(job.sweep, job.id, slurm_job=str(handle.job_id), submitted_from=host)
        events.queue(job.id)
    waiting = dict(zip(submitted, jobs, strict=True))
    if cluster == "slurm":
        _follow_queue(waiting, events, silence_s)
    else:
        _follow_local(waiting, events)


def submit(executor: Any, jobs: Sequence[Job], cluster: str) -> list[Any]:
    """The job handles of ``jobs`` submitted as one array; a submission that fails (``sbatch``
    exits non-zero or is missing, or its output names no job) is a ValueError naming the command
    and what it said, on one line."""
    from submitit.core.utils import FailedJobError, FailedSubmissionError

    command = "sbatch" if cluster == "slurm" else f"submitit's {cluster} executor"
    try:  # submitit prints a failing command's stderr: it is in the one line instead
        with contextlib.redirect_stderr(io.StringIO()):
            return executor.map_array(run_job, list(jobs))
    except (FailedJobError, FailedSubmissionError, OSError) as err:
        said = clipped(str(err)) or type(err).__name__
        raise ValueError(
            f"{command} could not submit the {len(jobs)} cell(s) of the sweep: {said}"
        ) from None


def _outcome(handle: Any, job: Job, state: str | None = None) -> Outcome:
    """The job's outcome from its result file (an error of the job as its cell's line)."""
    try:
        return handle.result()
    except Exception as err:  # noqa: BLE001  (the job raised, or its result is unreadable)
        ended = f" ended {state}" if state and state != "COMPLETED" else " failed"
        return Outcome(job.id, f"its Slurm job {handle.job_id}{ended}: {clipped(str(err))}")


def _follow_local(waiting: dict[Any, Job], events: Events) -> None:
    """submitit's own following (``--cluster local`` / ``debug``)."""
    for job in waiting.values():
        events.started(job.id)
    while waiting:
        for handle, job in list(waiting.items()):
            if handle.done():
                del waiting[handle]
                events.finished(_outcome(handle, job))
        if waiting:
            time.sleep(POLL_S)


def _follow_queue(waiting: dict[Any, Job], events: Events, silence_s: float) -> None:
    """Follow the jobs from ``squeue`` (``sacct`` for a final state where there is one)."""
    accounting = has_accounting()
    last: dict[str, str] = {}
    gone: dict[str, float] = {}
    running_since: dict[str, float] = {}
    asked, answered = 0.0, time.monotonic()
    while waiting:
        states = None
        if time.monotonic() - asked >= QUEUE_POLL_S:
            states = queue_states(str(h.job_id) for h in waiting)
            asked = time.monotonic()
            if states is not None:
                answered = asked
            elif asked - answered > silence_s:  # no word of the jobs for too long: end
                for handle, job in list(waiting.items()):
                    del waiting[handle]
                    events.finished(
                        Outcome(
                            job.id,
                            f"its Slurm job {handle.job_id} is unknown: "
                            f"squeue did not answer for {silence_s:.0f} s",
                        )
                    )
                break
        for handle, job in list(waiting.items()):
            jid = str(handle.job_id)
            if handle.paths.result_pickle.exists():
                del waiting[handle]
                outcome = _outcome(handle, job, None)
                if not outcome.ok:  # the state the job ended in (CANCELLED, TIMEOUT, ...)
                    state = (queue_states([jid]) or {}).get(jid) or last.get(jid)
                    outcome = _outcome(handle, job, state)
                events.finished(outcome)
                continue
            if states is None:
                continue
            state = states.get(jid)
            if state is not None:
                last[jid] = state
            if state in STARTED:
                events.started(job.id)
                since = running_since.setdefault(jid, time.monotonic())
                quiet = min(age(record_path(job.sweep, job.id)), time.monotonic() - since)
                if job.sweep and quiet > silence_s:
                    cancel([jid])
                    del waiting[handle]
                    events.finished(
                        Outcome(
                            job.id,
                            f"its Slurm job {jid} was silent for "
                            f"{quiet:.0f} s (no heartbeat from its cell): "
                            "cancelled",
                        )
                    )
                continue
            if state in ACTIVE:
                continue
            first = gone.setdefault(jid, time.monotonic())
            if time.monotonic() - first < GONE_GRACE_S:
                continue
            del waiting[handle]
            final = (final_state(jid) if accounting else None) or last.get(jid)
            how = f"ended {final}" if final else "left the queue"
            note = "" if accounting else " (no job accounting on this cluster)"
            events.finished(Outcome(job.id, f"its Slurm job {jid} {how} without a result{note}"))
        if waiting:
            time.sleep(POLL_S)
