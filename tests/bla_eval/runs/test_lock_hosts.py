"""A run folder's lock holds across hosts: a lock file naming a holder on another host, refreshed
within the lease, stops a second run even where that host's ``flock`` is not seen here; once
the lease has run out (its holder killed) the lock is taken over."""

from __future__ import annotations

import os
import time

import pytest
from bla_eval.locking import LEASE_S
from bla_eval.runs import RunFolder


def _lock_file(folder):
    folder.mkdir()
    path = folder / ".bla-eval.lock"
    path.write_text("4242 othernode\n", encoding="ascii")
    return path


def test_a_fresh_holder_on_another_host_is_refused(tmp_path):
    _lock_file(tmp_path / "run")
    refused = r"in use by another bla-eval run \(process 4242 on othernode\)"
    with pytest.raises(ValueError, match=refused), RunFolder(tmp_path / "run").lock():
        pass
    assert (tmp_path / "run" / ".bla-eval.lock").read_text() == "4242 othernode\n"


def test_a_lapsed_lease_is_taken_over_and_names_this_host(tmp_path):
    path = _lock_file(tmp_path / "run")
    old = time.time() - LEASE_S - 1
    os.utime(path, (old, old))
    with RunFolder(tmp_path / "run").lock():
        assert path.read_text() == f"{os.getpid()} {os.uname().nodename}\n"
    assert not path.exists()
