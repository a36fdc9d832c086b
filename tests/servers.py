"""The servers the tests start (``transformers serve``, llama.cpp's, vLLM's, the Space): one context
manager starts a server, waits until it answers and stops it, its output kept in a log file."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

STOP_S = 60
"""How long a stopped server has to exit before it is killed."""


@contextmanager
def started(
    command: Sequence[object],
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen]:
    """``command`` running, its output into the file ``log`` (a pipe nobody reads would fill and
    block it); stopped at the end (:func:`stop`)."""
    with Path(log).open("w") as handle:
        proc = subprocess.Popen(
            [str(c) for c in command], stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd
        )
    try:
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Terminate ``proc`` if it still runs; kill it if it has not exited :data:`STOP_S` later."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_for(url: str, proc: subprocess.Popen, log: Path, seconds: float) -> None:
    """Return once ``url`` answers (any HTTP status: olah offline answers 504 to what it would
    fetch upstream); fail with the end of ``log`` when ``proc`` exits or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited: {Path(log).read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:  # an HTTP answer: the server is up
            return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"no answer at {url} within {seconds} s: {Path(log).read_text()[-3000:]}")


@contextmanager
def serving(
    command: Sequence[object],
    url: str,
    log: Path,
    seconds: float = 180,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen]:
    """The server ``command`` (as :func:`started`), once ``url`` answers (:func:`wait_for`)."""
    with started(command, log, env, cwd) as proc:
        wait_for(url, proc, log, seconds)
        yield proc
