"""``--executor ray``: one Ray task per cell (``num_cpus`` / ``num_gpus`` each), on a local
instance started here or the cluster at ``--address`` / ``$RAY_ADDRESS``; a task whose worker
is lost fails its cell only (no retry: the rerun resumes it)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .job import Job, Outcome, run_job
from .progress import Events


def run_ray(
    jobs: Sequence[Job],
    events: Events,
    address: str | None = None,
    cpus: float = 1,
    gpus: float = 0,
) -> None:
    """Run ``jobs`` as Ray tasks; a Ray instance this call started is shut down at the end
    (one already running in this process is used and left running)."""
    import ray

    started = not ray.is_initialized()
    if started:
        address = address or os.environ.get("RAY_ADDRESS")
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(run_job)
        refs = {}
        for job in jobs:
            refs[task.remote(job)] = job
            events.started(job.id)
        waiting = list(refs)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            for ref in ready:
                try:
                    outcome = ray.get(ref)
                except Exception as err:  # noqa: BLE001  (a lost worker or node)
                    line = " ".join(str(err).split())[:300]
                    outcome = Outcome(refs[ref].id, f"its Ray task failed: {line}")
                events.finished(outcome)
    finally:
        if started:
            ray.shutdown()
