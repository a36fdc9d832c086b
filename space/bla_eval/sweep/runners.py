"""Who runs each cell: a record per running cell in the sweep folder's ``.runners``, written by
the driver when it submits a Slurm job and by the job itself when it starts (its Slurm job id
or Ray task, host and process), kept fresh by a heartbeat while the cell runs and removed when
it ends. A rerun reads them to never start a second writer of a cell (``live_runners``)."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..outputs import parse_json, read_regular, refuse_link, write_json_atomic

RUNNERS = ".runners"
"""The folder of the records, in the sweep folder."""
HEARTBEAT_S = 5.0
"""How often a running cell refreshes its record."""
STALE_S = 60.0
"""A record not refreshed for this long is a runner that ended without removing it (killed)."""
REMOVE = "remove it if no job runs the cell"
MAX_RECORD_BYTES = 64 * 1024
"""The largest runner record read (one holds a few short fields)."""
SLURM_JOB_RE = re.compile(r"[0-9]{1,20}(_[0-9]{1,10})?")
"""A Slurm job id as a record holds it: digits, ``<array>_<task>`` for a task of an array."""
RAY_TASK_RE = re.compile(r"[0-9a-fA-F]{1,128}")
"""A Ray task id (hexadecimal)."""
MAX_PID = 2**31 - 1
"""The largest process id of any system (``pid_t`` is a signed 32-bit integer)."""


def record_path(sweep: Path | str, cell: str) -> Path:
    """``.runners/<benchmark>--<protocol>--<model>.json`` (entry names hold no ``/``)."""
    return Path(sweep) / RUNNERS / (cell.replace("/", "--") + ".json")


def read_record(path: Path) -> dict[str, Any] | None:
    """A runner record, or None when there is none; a record that is a symbolic link or no
    regular file, that is not a JSON object (records are written whole, by a rename), or whose
    job id, task id, pid or host is not one, is refused (a ValueError naming the file): its
    values reach ``scancel`` and ``kill``."""
    refuse_link(path)
    try:
        data = read_regular(path, MAX_RECORD_BYTES, follow=False)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"cannot read the runner record {path}: {err.strerror or err}") from err
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"the runner record {path} is over {MAX_RECORD_BYTES} bytes: {REMOVE}")
    try:
        value = parse_json(data.decode("utf-8"))
    except ValueError as err:  # UnicodeDecodeError included
        raise ValueError(f"the runner record {path} is not valid JSON ({err}): {REMOVE}") from None
    if not isinstance(value, dict):
        raise ValueError(f"the runner record {path} is not a JSON object: {REMOVE}")
    check_record(path, value)
    return value


def check_record(path: Path, record: dict[str, Any]) -> None:
    """Refuse (ValueError naming ``path`` and the field) a record value that is not what its
    field holds: a Slurm job id of digits, a hexadecimal Ray task id, a pid from 1 to
    :data:`MAX_PID`, a host name."""
    checks = {
        "slurm_job": lambda v: isinstance(v, str) and SLURM_JOB_RE.fullmatch(v) is not None,
        "ray_task": lambda v: isinstance(v, str) and RAY_TASK_RE.fullmatch(v) is not None,
        "pid": lambda v: type(v) is int and 0 < v <= MAX_PID,
        "host": lambda v: isinstance(v, str) and 0 < len(v) <= 255 and v.isprintable(),
    }
    for field, valid in checks.items():
        value = record.get(field)
        if value is not None and not valid(value):
            raise ValueError(
                f"the runner record {path} holds {field} {str(value)[:40]!r}, which is no "
                f"{field.replace('_', ' ')}: {REMOVE}"
            )


def write_record(sweep: Path | str, cell: str, **fields: Any) -> Path:
    """Write the cell's record (atomically): ``fields`` beside the cell id and the time."""
    path = record_path(sweep, cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"cell": cell, "time": time.time(), **fields})
    return path


def this_runner() -> dict[str, Any]:
    """This process as a cell's runner: host, pid, and its Slurm job or Ray task when it is one."""
    who: dict[str, Any] = {"host": os.uname().nodename, "pid": os.getpid()}
    if "SLURM_JOB_ID" in os.environ:
        array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
        who["slurm_job"] = f"{array}_{task}" if array and task else os.environ["SLURM_JOB_ID"]
    with contextlib.suppress(Exception):  # not a Ray task, or Ray not installed
        import ray

        if ray.is_initialized():
            who["ray_task"] = ray.get_runtime_context().get_task_id()
    return who


@contextlib.contextmanager
def running(sweep: Path | str, cell: str) -> Iterator[None]:
    """Record this process as the cell's runner, refresh the record while the block runs, and
    remove it at the end."""
    path = write_record(sweep, cell, **this_runner())
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            with contextlib.suppress(OSError):
                os.utime(path)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        with contextlib.suppress(OSError):
            path.unlink()


def age(path: Path) -> float:
    """Seconds since the record was last refreshed (infinite when it is gone)."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return float("inf")


def describe(record: dict[str, Any]) -> str:
    """``Slurm job 12_0 on node1, process 345`` (what the record names)."""
    parts = []
    if record.get("slurm_job"):
        parts.append(f"Slurm job {record['slurm_job']}")
    if record.get("ray_task"):
        parts.append(f"Ray task {record['ray_task']}")
    if record.get("pid") is not None:
        parts.append(f"process {record['pid']} on {record.get('host', '?')}")
    return ", ".join(parts) or "an unnamed runner"


def alive(record: dict[str, Any], path: Path, queue: set[str] | None) -> bool:
    """Whether the runner a record names may still write its cell: its Slurm job still in the
    queue (when the queue can be asked), else its process where it is on this host, else a
    heartbeat within :data:`STALE_S`."""
    job = record.get("slurm_job")
    if job and queue is not None:
        return str(job) in queue
    pid = record.get("pid")
    if record.get("host") == os.uname().nodename and isinstance(pid, int):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return age(path) < STALE_S
    return age(path) < STALE_S


def live_runners(sweep: Path | str, cells: list[str], queue: set[str] | None) -> dict[str, dict]:
    """Cell -> the record of a runner that may still write it (:func:`alive`; ``queue``: the
    ids of the jobs ``squeue`` lists as active, None without Slurm)."""
    live = {}
    for cell in cells:
        path = record_path(sweep, cell)
        record = read_record(path)
        if record is not None and alive(record, path, queue):
            live[cell] = record
    return live
