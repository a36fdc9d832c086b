"""Lock files: anything but a regular file at a lock's path is refused in one line naming it,
at once (a FIFO is never opened to wait for a writer), by the run folder and by ``bla-eval``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.locking import lock
from bla_eval.runs import RunFolder

from tests.bla_eval.commands import eval_args, refused


def within(seconds: float, target, *args):
    """``target(*args)``'s exception, or its result; a call still running after ``seconds`` (a
    hang) fails the test."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(target(*args))
        except Exception as err:  # noqa: BLE001  (the outcome under test)
            outcome.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{target.__name__} still waits after {seconds} s"
    return outcome[0]


def _hold(path: Path) -> None:
    with lock(path, path.parent, "bla-eval"):
        pass


def test_a_fifo_at_the_lock_is_refused_at_once(tmp_path: Path):
    path = tmp_path / ".bla-eval.lock"
    os.mkfifo(path)
    err = within(10, _hold, path)
    assert isinstance(err, ValueError) and str(err) == (
        f"{path} is a FIFO, not a regular file: remove it or name a file"
    )
    assert path.exists()  # not the program's to remove


def test_a_run_folder_whose_lock_is_a_fifo_is_one_line(
    tmp_path: Path, tiny_clip, built_dataset, capsys
):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / ".bla-eval.lock")
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "ap", "--limit", "2")
    line = within(120, refused, bla_eval, argv, capsys, "is a FIFO, not a regular file")
    assert str(run / ".bla-eval.lock") in line
    assert sorted(p.name for p in run.iterdir()) == [".bla-eval.lock"]


@pytest.mark.parametrize("kind", ["folder", "link"])
def test_a_folder_or_link_at_the_lock_is_refused(tmp_path: Path, kind: str):
    path = tmp_path / "run" / ".bla-eval.lock"
    path.parent.mkdir()
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "elsewhere")
    refusal = pytest.raises(ValueError, match="not a regular file|symbolic link")
    with refusal, RunFolder(tmp_path / "run").lock():
        pass
