"""``--executor slurm``: one Slurm job per cell through submitit (partition, time limit, CPUs
and GPUs per cell); ``--cluster local`` runs the same jobs as processes here (submitit's local
executor), ``debug`` in this process. The jobs' logs go to ``.submitit`` in the sweep folder."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from .job import Job, Outcome, run_job
from .progress import Events

CLUSTERS = ("slurm", "local", "debug")
POLL_S = 1.0


def run_slurm(
    jobs: Sequence[Job],
    events: Events,
    logs: Path,
    cluster: str = "slurm",
    partition: str | None = None,
    minutes: int = 60,
    cpus: int = 1,
    gpus: int = 0,
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
    if partition is not None and cluster == "slurm":
        parameters["slurm_partition"] = partition
    executor.update_parameters(**parameters)
    submitted = executor.map_array(run_job, list(jobs))
    for job in jobs:
        events.started(job.id)
    waiting = dict(zip(submitted, jobs, strict=True))
    while waiting:
        for handle, job in list(waiting.items()):
            if not handle.done():
                continue
            del waiting[handle]
            try:
                outcome = handle.result()
            except Exception as err:  # noqa: BLE001  (a failed, cancelled or preempted job)
                line = " ".join(str(err).split())[-300:]
                outcome = Outcome(job.id, f"its Slurm job {handle.job_id} failed: {line}")
            events.finished(outcome)
        if waiting:
            time.sleep(POLL_S)
