"""results.json's provenance: the lock an environment of the clone's set-up was installed from."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from bla_eval.provenance import LOCK_MARKER, environment_lock

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_test_environment_names_the_lock_it_was_installed_from() -> None:
    lock = REPO_ROOT / ".ci" / "locks" / "dev.txt"
    assert (Path(sys.prefix) / LOCK_MARKER).is_file(), "the suite runs in .ci/setup's .venv"
    assert environment_lock() == {
        "lock": ".ci/locks/dev.txt",
        "sha256": hashlib.sha256(lock.read_bytes()).hexdigest(),
    }


def test_an_environment_without_a_valid_marker_names_no_lock(tmp_path: Path) -> None:
    assert environment_lock(tmp_path) is None
    for text in ("not json", "[]", json.dumps({"lock": ".ci/locks/dev.txt"}), '{"lock": 1}'):
        (tmp_path / LOCK_MARKER).write_text(text)
        assert environment_lock(tmp_path) is None, text
    (tmp_path / LOCK_MARKER).write_text(json.dumps({"lock": "a.txt", "sha256": "ab"}))
    assert environment_lock(tmp_path) == {"lock": "a.txt", "sha256": "ab"}
