"""``--executor local``: N worker processes on this machine, each given one GPU of
``CUDA_VISIBLE_DEVICES`` (or of those torch sees) in turn; a worker that dies fails its cell
only, and a new one takes its place.

The workers die with the sweep, however it ends: each leads its own process group (what it
starts goes with it) and, on Linux, asks the kernel for SIGKILL when the sweep's process ends
(``prctl(PR_SET_PDEATHSIG)``; elsewhere a thread watches the parent's pid), so a ``kill -9`` of
the sweep leaves no worker finishing a cell that the rerun starts again."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
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


PR_SET_PDEATHSIG = 1
"""``prctl``'s option: the signal a process gets when its parent ends (``linux/prctl.h``)."""
WATCH_SECONDS = 1.0


def die_with(parent: int) -> None:
    """End this process when the process ``parent`` (which started it) ends, ``kill -9``
    included: the kernel's parent-death signal on Linux, a thread watching the parent's pid
    elsewhere; when ``parent`` has ended already, now. This process also leads its own process
    group, so the sweep can end what it starts with it."""
    with contextlib.suppress(OSError):  # already a group leader
        os.setpgid(0, 0)
    armed = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # it ended before the signal was asked for
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def _serve(conn: Connection, gpu: str | None, parent: int) -> None:
    """A worker: run the jobs sent until None comes (its GPU set before torch is imported);
    it dies with the sweep's process ``parent``."""
    die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the sweep, which ends us
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    while (job := conn.recv()) is not None:
        conn.send(run_job(job))


class _Worker:
    def __init__(self, context: Any, gpu: str | None) -> None:
        self.conn, child = context.Pipe()
        self.gpu = gpu
        self.process = context.Process(target=_serve, args=(child, gpu, os.getpid()), daemon=True)
        self.process.start()
        child.close()
        self.job: Job | None = None

    def kill(self) -> None:
        """End the worker and whatever it started (its process group)."""
        pid = self.process.pid
        with contextlib.suppress(OSError):
            if pid is not None and os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        self.process.kill()


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
            w.kill()
        raise
    finally:
        for w in pool:
            if w.process.is_alive():
                with contextlib.suppress(OSError):  # a worker that died meanwhile
                    w.conn.send(None)
        for w in pool:
            w.process.join(timeout=10)
            if w.process.is_alive():
                w.kill()
                w.process.join()
