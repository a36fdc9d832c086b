"""`.ci/build-env`: an environment is built once per lock, holds exactly the lock's packages, and a
build removes what only older locks of the same environment left behind (never what it cannot
prove it built)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.harness_envs import REPO_ROOT

BUNDLED = Path(sysconfig.get_paths()["stdlib"]) / "ensurepip" / "_bundled"
"""The wheels of pip and setuptools that Python carries (a local wheel folder for uv)."""


def _checkout(tmp_path: Path) -> Path:
    """A clone's `.ci` folder with one environment, `tiny`, whose lock holds the pip that Python
    carries, with its hash (installed offline from Python's own wheel)."""
    root = tmp_path / "clone"
    (root / ".ci" / "envs").mkdir(parents=True)
    for name in ("build-env", "lib.sh"):
        shutil.copy2(REPO_ROOT / ".ci" / name, root / ".ci" / name)
    [wheel] = BUNDLED.glob("pip-*.whl")
    version = wheel.name.split("-")[1]
    digest = subprocess.run(
        [sys.executable, "-m", "pip", "hash", str(wheel)], capture_output=True, text=True
    ).stdout.split()[-1]
    (root / ".ci" / "envs" / "tiny.lock").write_text(f"pip=={version} \\\n    {digest}\n")
    return root


def _build(root: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    assert uv, "uv is in the test environment's lock"
    local = {"BLA_UV": uv, "UV_OFFLINE": "1", "BLA_FIND_LINKS": str(BUNDLED)}
    return subprocess.run(
        ["bash", str(root / ".ci" / "build-env"), "tiny"],
        capture_output=True,
        text=True,
        env={**os.environ, "BLA_ENV_CACHE": str(cache), **local, **env},
        check=False,
    )


def _old_env(cache: Path, key: str, *, marked: bool = True) -> Path:
    folder = cache / f"tiny-{key}"
    folder.mkdir(parents=True)
    if marked:
        (folder / ".complete").touch()
    time.sleep(0.05)  # distinct modification times order the uses
    return folder


@pytest.mark.slow
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
