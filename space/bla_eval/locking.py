"""Lock files, so two processes never write the same output at once.

``bla-eval`` locks its run folder (``.bla-eval.lock`` inside it, through
``bla_eval.runs.RunFolder.lock``); ``bla-finetune``, whose output appears only when it is renamed
into place, locks the path beside it (``.<name>.bla-finetune.lock``).

The lock is ``filelock``'s (an ``flock`` on the file, opened without following a symbolic
link): the system releases it when its process ends, however it ends, so there is no stale lock
to take over and no race between two processes taking over the same one. What stays written
here: the holder's pid and host in the file, the refusal of a symbolic link at the lock's path,
and the removal of the file by its holder before the release (``filelock`` keeps it; a process
that opened the removed file sees that it was removed and tries again).

Across hosts (a shared file system whose ``flock`` one node's holder does not show to another)
the file is a lease as well: its holder refreshes its time every :data:`REFRESH_S` seconds, and
a process on another host that gets the ``flock`` still stops while the file names a holder of
another host refreshed within :data:`LEASE_S` (one killed with no chance to remove the file is
taken over after that).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .outputs import naming, not_regular, open_own, open_regular, refuse_link

REFRESH_S = 10.0
"""How often a holder refreshes its lock file's time."""
LEASE_S = 60.0
"""A lock file of another host's holder not refreshed for this long is taken over."""


def _holder(path: Path) -> tuple[int | None, str | None]:
    """The pid and host the lock file names (None where it names none)."""
    try:
        fd = open_regular(path, follow=False)
    except (OSError, ValueError):
        return None, None
    try:
        words = os.read(fd, 512).decode("utf-8", "replace").split()
    except OSError:
        return None, None
    finally:
        os.close(fd)
    pid = int(words[0]) if words and words[0].isdigit() else None
    return pid, words[1] if len(words) > 1 else None


def _in_use(output: Path, command: str, pid: int | None, host: str | None) -> ValueError:
    who = f" (process {pid}{f' on {host}' if host else ''})" if pid is not None else ""
    return ValueError(
        f"output folder {output} is in use by another {command} run{who}; wait for it or "
        "choose another --output"
    )


def _refresh(path: Path, stop: threading.Event) -> None:
    while not stop.wait(REFRESH_S):
        try:
            os.utime(path)
        except OSError:
            return


def refuse_non_regular(path: Path) -> None:
    """Refuse a symbolic link, a FIFO, a device or anything else but a regular file at the lock's
    ``path`` (a ValueError naming it): the lock's own reads and writes never wait on one."""
    refuse_link(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode)


@contextmanager
def lock(path: Path, output: Path, command: str) -> Iterator[None]:
    """Hold the lock file ``path`` of ``output`` for the duration; a second holder stops at
    once with an error naming the output, the command and the other process."""
    from filelock import FileLock, Timeout

    path = Path(path)
    refuse_non_regular(path)
    held = FileLock(str(path))
    try:
        with naming(path):
            held.acquire(timeout=0)
    except Timeout:
        pid, host = _holder(path)
        raise _in_use(output, command, pid, None if host == os.uname().nodename else host) from None
    here = os.uname().nodename
    pid, host = _holder(path)
    try:
        fresh = time.time() - path.stat().st_mtime < LEASE_S
    except OSError:
        fresh = False
    if pid is not None and host is not None and host != here and fresh:
        held.release()  # a holder on another host whose flock this node does not see
        raise _in_use(output, command, pid, host)
    stop = threading.Event()
    refresher = threading.Thread(target=_refresh, args=(path, stop), daemon=True)
    try:
        with naming(path):
            fd = open_own(path, os.O_WRONLY)
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()} {here}\n".encode())
            finally:
                os.close(fd)
        refresher.start()
        yield
    finally:
        stop.set()
        if refresher.is_alive():
            refresher.join()
        try:
            if not path.is_symlink():
                path.unlink(missing_ok=True)
        finally:
            held.release()


def output_lock(target: Path, command: str) -> AbstractContextManager[None]:
    """Hold the lock of an output that is renamed into place at the end: a file beside it,
    ``.<name>.<command>.lock`` (the parent folder is created if needed)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    slug = command.replace(" ", "-")
    return lock(target.with_name(f".{target.name}.{slug}.lock"), target, command)
