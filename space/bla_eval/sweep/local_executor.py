"""``--executor local``: N worker processes on this machine, each given one GPU of
``CUDA_VISIBLE_DEVICES`` (or of those torch sees) in turn; a worker that dies fails its cell
only, and a new one takes its place."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from .job import Job, Outcome, run_job
from .progress import Events


def visible_gpus() -> list[str]:
    """The GPUs cells may use: ``CUDA_VISIBLE_DEVICES`` when set, else every CUDA device."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [g.strip() for g in listed.split(",") if g.strip() and g.strip() != "-1"]
    try:
        import torch

        return [str(k) for k in range(torch.cuda.device_count())]
    except ImportError:
        return []


def _serve(conn: Connection, gpu: str | None) -> None:
    """A worker: run the jobs sent until None comes (its GPU set before torch is imported)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the sweep, which ends us
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    while (job := conn.recv()) is not None:
        conn.send(run_job(job))


class _Worker:
    def __init__(self, context: Any, gpu: str | None) -> None:
        self.conn, child = context.Pipe()
        self.gpu = gpu
        self.process = context.Process(target=_serve, args=(child, gpu), daemon=True)
        self.process.start()
        child.close()
        self.job: Job | None = None


def run_local(jobs: Sequence[Job], events: Events, workers: int = 1) -> None:
    """Run ``jobs`` on ``workers`` processes (spawned: no state of this one is shared)."""
    context = multiprocessing.get_context("spawn")
    gpus = visible_gpus()
    pending = deque(jobs)
    pool = [
        _Worker(context, gpus[k % len(gpus)] if gpus else None)
        for k in range(min(workers, len(jobs)))
    ]
    try:
        while pending or any(w.job for w in pool):
            for w in pool:
                if w.job is None and pending:
                    w.job = pending.popleft()
                    w.conn.send(w.job)
                    events.started(w.job.id)
            busy = [w for w in pool if w.job is not None]
            wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for k, w in enumerate(pool):
                if w.job is None or not (w.conn.poll() or not w.process.is_alive()):
                    continue
                try:
                    outcome = w.conn.recv()
                except (EOFError, OSError):
                    w.process.join()
                    code = w.process.exitcode
                    outcome = Outcome(w.job.id, f"its worker process died (exit code {code})")
                    if pending:  # a new worker takes its place
                        pool[k] = _Worker(context, w.gpu)
                w.job = None
                events.finished(outcome)
    except BaseException:  # interrupted: the cells running now are resumed by the rerun
        for w in pool:
            w.process.kill()
        raise
    finally:
        for w in pool:
            if w.process.is_alive():
                with contextlib.suppress(OSError):  # a worker that died meanwhile
                    w.conn.send(None)
        for w in pool:
            w.process.join(timeout=10)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
