"""`.ci/build-env`: an environment is built once per set of pins, and a build removes what only
older pins of the same environment left behind (never what it cannot prove it built)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.harness_envs import REPO_ROOT


def _checkout(tmp_path: Path) -> Path:
    """A clone's `.ci` folder with one environment, `tiny`, whose one pin is pip itself (already
    in every fresh virtual environment, so the build needs no network)."""
    root = tmp_path / "clone"
    (root / ".ci" / "envs").mkdir(parents=True)
    shutil.copy2(REPO_ROOT / ".ci" / "build-env", root / ".ci" / "build-env")
    (root / ".ci" / "envs" / "tiny.txt").write_text("pip\n")
    return root


def _build(root: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(root / ".ci" / "build-env"), "tiny"],
        capture_output=True,
        text=True,
        env={**os.environ, "BLA_ENV_CACHE": str(cache), **env},
        check=False,
    )


def _old_env(cache: Path, key: str, *, marked: bool = True) -> Path:
    folder = cache / f"tiny-{key}"
    folder.mkdir(parents=True)
    if marked:
        (folder / ".complete").touch()
    time.sleep(0.05)  # distinct modification times order the uses
    return folder


def test_a_build_removes_older_pins_but_keeps_the_most_recent_and_what_it_cannot_prove(
    tmp_path: Path,
) -> None:
    root, cache = _checkout(tmp_path), tmp_path / "cache"
    oldest, older, held = (_old_env(cache, k * 16) for k in "123")
    recent = _old_env(cache, "4" * 16)
    (recent / ".last-used").touch()
    unfinished = _old_env(cache, "5" * 16, marked=False)
    other_name = cache / f"tiny-extra-{'6' * 16}"
    other_name.mkdir()
    (other_name / ".complete").touch()
    with (cache / f"{held.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another caller is building or checking it
        built = _build(root, cache)
    assert built.returncode == 0, built.stderr
    dest = Path(built.stdout.strip())
    assert (dest / ".complete").is_file() and (dest / "bin" / "python").exists()
    assert not oldest.exists() and not older.exists()
    assert f"removing {oldest}" in built.stderr and f"removing {older}" in built.stderr
    for kept in (held, recent, unfinished, other_name):
        assert kept.is_dir(), kept

    again = _build(root, cache, BLA_ENV_KEEP="1")  # already built: nothing is removed
    assert again.returncode == 0 and again.stdout.strip() == str(dest)
    assert "removing" not in again.stderr and recent.is_dir()


def test_a_bad_keep_count_is_one_line_naming_it(tmp_path: Path) -> None:
    built = _build(_checkout(tmp_path), tmp_path / "cache", BLA_ENV_KEEP="two")
    assert built.returncode == 2
    assert built.stderr.strip() == "build-env: BLA_ENV_KEEP must be a positive integer, got 'two'"
    assert not (tmp_path / "cache").exists()
