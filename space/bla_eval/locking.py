"""Lock files, so two processes never write the same output at once.

``bla-eval`` locks its run folder (``.bla-eval.lock`` inside it, through
``bla_eval.runs.RunFolder.lock``); ``bla-finetune``, whose output appears only when it is renamed
into place, locks the path beside it (``.<name>.bla-finetune.lock``). A lock holds the pid of its
holder; a lock whose process is gone is taken over.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .outputs import naming, pid_alive


def _holder(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def lock(path: Path, output: Path, command: str) -> Iterator[None]:
    """Hold the lock file ``path`` of ``output`` for the duration; a second holder stops at
    once with an error naming the output, the command and the other process."""
    path = Path(path)
    for _ in range(2):
        try:
            with naming(path):
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            pid = _holder(path)
            if pid is not None and pid_alive(pid):
                raise ValueError(
                    f"output folder {output} is in use by another {command} run (process "
                    f"{pid}); wait for it or choose another --output"
                ) from None
            path.unlink(missing_ok=True)  # stale: its process is gone
    else:
        raise ValueError(f"cannot lock output folder {output}")
    try:
        with naming(path):
            os.write(fd, f"{os.getpid()}\n".encode())
            os.close(fd)
        yield
    finally:
        path.unlink(missing_ok=True)


def output_lock(target: Path, command: str) -> AbstractContextManager[None]:
    """Hold the lock of an output that is renamed into place at the end: a file beside it,
    ``.<name>.<command>.lock`` (the parent folder is created if needed)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    slug = command.replace(" ", "-")
    return lock(target.with_name(f".{target.name}.{slug}.lock"), target, command)
