"""``--executor ray``: one Ray task per cell (``num_cpus`` / ``num_gpus`` each), on the cluster at
``--address`` (else ``$RAY_ADDRESS``), or on a local instance this sweep starts and stops (said
on stderr); a task whose worker is lost fails its cell only (no retry: the rerun resumes it). A
cell counts as running once its task has recorded itself (``runners``), queued before."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence

from ..cli_common import one_line
from .job import Job, Outcome, run_job
from .progress import Events, clipped
from .runners import record_path

CONNECT_S = 10.0
"""How long the cluster's address may take to accept a connection."""
WAIT_S = 1.0
"""How often the queued cells are looked at while no task ends."""


class EngineError(ValueError):
    """An engine that did not start or could not be reached (one line, exit 2)."""


def connect(address: str | None) -> None:
    """``ray.init`` on ``address``, else ``$RAY_ADDRESS``, else a new local instance (never a
    cluster Ray's address file names); a failure is one :class:`EngineError` line."""
    import ray

    where = address or os.environ.get("RAY_ADDRESS")
    if where is None:
        print(
            "bla-eval sweep: starting a local Ray instance (no --address, RAY_ADDRESS unset)",
            file=sys.stderr,
        )
    elif address is None:
        print(f"bla-eval sweep: Ray cluster of RAY_ADDRESS={where}", file=sys.stderr)
    if where:
        answers(where)
    try:
        ray.init(
            address=where or "local",
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except Exception as err:  # noqa: BLE001  (Ray raises many kinds; all mean no engine)
        shown = f"the Ray cluster at {where}" if where else "a local Ray instance"
        raise EngineError(f"{shown} did not start: {clipped(one_line(err))}") from None


def answers(address: str, seconds: float = CONNECT_S) -> None:
    """Refuse at once (one :class:`EngineError` line) a ``host:port`` where nothing listens:
    Ray itself retries such an address for minutes. Other forms (``ray://``, ``auto``) are
    left to Ray."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as err:
        raise EngineError(
            f"the Ray cluster at {address} did not answer ({one_line(err)}): start it with "
            "`ray start --head`, or give its address with --address / RAY_ADDRESS"
        ) from None


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
        connect(address)
    try:
        task = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(run_job)
        refs = {}
        for job in jobs:
            refs[task.remote(job)] = job
            events.queue(job.id)
        waiting = list(refs)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1, timeout=WAIT_S)
            for ref in waiting:
                job = refs[ref]
                if job.sweep and record_path(job.sweep, job.id).exists():
                    events.started(job.id)
            for ref in ready:
                try:
                    outcome = ray.get(ref)
                except Exception as err:  # noqa: BLE001  (a lost worker or node)
                    outcome = Outcome(refs[ref].id, f"its Ray task failed: {clipped(str(err))}")
                events.finished(outcome)
    finally:
        if started:
            ray.shutdown()
