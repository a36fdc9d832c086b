"""Lock files, so two processes never write the same output at once.

``bla-eval`` locks its run folder (``.bla-eval.lock`` inside it, through
``bla_eval.runs.RunFolder.lock``); ``bla-finetune``, whose output appears only when it is renamed
into place, locks the path beside it (``.<name>.bla-finetune.lock``).

The lock is ``filelock``'s (an ``flock`` on the file, opened without following a symbolic
link): the system releases it when its process ends, however it ends, so there is no stale lock
to take over and no race between two processes taking over the same one. What stays written
here: the holder's pid in the file (only for the error line of a second process; it proves
nothing), the refusal of a symbolic link at the lock's path, and the removal of the file by its
holder before the release (``filelock`` keeps it; a process that opened the removed file sees
that it was removed and tries again).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .outputs import naming, open_own, refuse_link


def _holder(path: Path) -> int | None:
    try:
        fd = open_own(path, os.O_RDONLY)
    except (OSError, ValueError):
        return None
    try:
        return int(os.read(fd, 64).decode("ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None
    finally:
        os.close(fd)


@contextmanager
def lock(path: Path, output: Path, command: str) -> Iterator[None]:
    """Hold the lock file ``path`` of ``output`` for the duration; a second holder stops at
    once with an error naming the output, the command and the other process."""
    from filelock import FileLock, Timeout

    path = Path(path)
    refuse_link(path)
    held = FileLock(str(path))
    try:
        with naming(path):
            held.acquire(timeout=0)
    except Timeout:
        pid = _holder(path)
        who = f" (process {pid})" if pid is not None else ""
        raise ValueError(
            f"output folder {output} is in use by another {command} run{who}; wait for it or "
            "choose another --output"
        ) from None
    try:
        with naming(path):
            fd = open_own(path, os.O_WRONLY)
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            finally:
                os.close(fd)
        yield
    finally:
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
