"""A lock file per output folder, so two runs never write the same folder at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .run_folder import LOCK_FILE, pid_alive


def _holder(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock for the duration; a second holder stops at once with an error
    naming the folder and the other process. A lock left by a dead process is taken over."""
    path = Path(folder) / LOCK_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            pid = _holder(path)
            if pid is not None and pid_alive(pid):
                raise ValueError(
                    f"output folder {folder} is in use by another bla-eval run (process {pid}); "
                    "wait for it or choose another --output"
                ) from None
            path.unlink(missing_ok=True)  # stale: its process is gone
    else:
        raise ValueError(f"cannot lock output folder {folder}")
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        yield
    finally:
        path.unlink(missing_ok=True)
