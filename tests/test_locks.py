"""The locks (`.ci/lock`) are current and are what the environments hold.

Every installed version comes from a lock: the test environment (`.ci/locks/dev.txt`) and each
separate environment (`.ci/envs/<name>.lock`) hold exactly their lock's packages; a change of
`pyproject.toml`'s dependencies or of an environment's input list without its lock fails here.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.harness_envs import REPO_ROOT, harness_python

_spec = importlib.util.spec_from_file_location("lock_inputs", REPO_ROOT / ".ci" / "lock_inputs.py")
lock_inputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock_inputs)

SEEDED = {"pip", "setuptools"}
"""What `python -m venv` puts into every environment (kept unless a lock pins it)."""
PROJECT = "bla-benchmark"
"""Installed editable beside the lock by `.ci/setup`."""


def _installed(pairs: list[tuple[str, str]], lock: dict[str, str]) -> dict[str, str]:
    found = {lock_inputs.canonical(name): version for name, version in pairs}
    return {
        name: version
        for name, version in found.items()
        if name != PROJECT and (name not in SEEDED or name in lock)
    }


def test_every_lock_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / ".ci" / "lock_inputs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_locks_list_every_environment_and_pin_every_package_with_hashes() -> None:
    names = {path.relative_to(REPO_ROOT).as_posix() for path in lock_inputs.all_locks()}
    assert names == {
        ".ci/locks/base.txt",
        ".ci/locks/dev.txt",
        ".ci/locks/engine.txt",
        ".ci/locks/main.txt",
        ".ci/envs/inspect.lock",
        ".ci/envs/lmms-eval.lock",
        ".ci/envs/lowest.lock",
        ".ci/envs/newest.lock",
        ".ci/envs/openflamingo.lock",
        ".ci/envs/vllm.lock",
    }
    for lock in lock_inputs.all_locks():
        text = lock.read_text(encoding="utf-8")
        pins = lock_inputs.locked_versions(lock)
        assert len(pins) > 20 and text.count("--hash=sha256:") >= len(pins), lock
        requirement_lines = [
            line for line in text.splitlines() if line and not line.startswith((" ", "#"))
        ]
        assert all("==" in line for line in requirement_lines), lock


def test_the_main_job_lock_takes_the_test_environments_versions() -> None:
    dev = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "dev.txt")
    main = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "main.txt")
    assert {name: dev.get(name) for name in main} == main
    assert "llama-cpp-python" not in main and "gradio" not in main  # the tests' packages only


def test_the_wheel_tests_locks_take_the_test_environments_versions() -> None:
    dev = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "dev.txt")
    base = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "base.txt")
    engine = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "engine.txt")
    assert {name: dev.get(name) for name in {**base, **engine}} == {**base, **engine}
    assert "torch" not in base and "transformers" not in base  # the metric alone
    assert set(base) < set(engine) and "torch" in engine and "gradio" not in engine


def test_the_version_tiers_are_locked_for_their_python_at_the_ends_of_the_ranges() -> None:
    envs = REPO_ROOT / ".ci" / "envs"
    assert "#python 3.10" in (envs / "lowest.txt").read_text(encoding="utf-8")
    assert "#python 3.13" in (envs / "newest.txt").read_text(encoding="utf-8")
    lowest = lock_inputs.locked_versions(envs / "lowest.lock")
    newest = lock_inputs.locked_versions(envs / "newest.lock")
    project = lock_inputs.tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = (
        project["project"]["dependencies"] + project["project"]["optional-dependencies"]["engine"]
    )
    floors = {
        Requirement(line).name: spec.version
        for line in listed
        for spec in Requirement(line).specifier
        if spec.operator == ">="
    }
    for name in ("torch", "transformers", "datasets", "numpy", "evaluate"):
        assert Version(lowest[name]) == Version(floors[name]), name
        assert Version(newest[name]) >= Version(lowest[name]), name


def test_the_test_environment_holds_exactly_its_lock() -> None:
    lock = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "locks" / "dev.txt")
    site = {sysconfig.get_paths()[name] for name in ("purelib", "platlib")}
    found = importlib.metadata.distributions(path=sorted(site))  # not what tests add to sys.path
    pairs = [(d.metadata["Name"], d.version) for d in found]
    assert _installed(pairs, lock) == lock


@pytest.mark.parametrize(
    "name", ["inspect", "lmms-eval", "openflamingo", "vllm", "lowest", "newest"]
)
def test_each_separate_environment_holds_exactly_its_lock(name: str) -> None:
    lock = lock_inputs.locked_versions(REPO_ROOT / ".ci" / "envs" / f"{name}.lock")
    frozen = subprocess.run(
        [str(harness_python(name)), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pairs = [tuple(line.split("==", 1)) for line in frozen.splitlines() if "==" in line]
    assert _installed(pairs, lock) == lock


def _copy_inputs(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    shutil.copytree(REPO_ROOT / ".ci", root / ".ci")
    shutil.copy2(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / ".ci" / "lock_inputs.py"), "--check"],
        capture_output=True,
        text=True,
    )


def test_a_dependency_changed_without_its_lock_is_named(tmp_path: Path) -> None:
    root = _copy_inputs(tmp_path)
    assert _check(root).returncode == 0
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('"pyyaml>=6",', '"pyyaml>=6",\n  "rich>=13",', 1))
    stale = _check(root)
    assert stale.returncode == 1
    assert stale.stderr.splitlines() == [
        f"{lock} is out of date: run bash .ci/lock"
        for lock in (
            ".ci/locks/base.txt",
            ".ci/locks/dev.txt",
            ".ci/locks/engine.txt",
            ".ci/locks/main.txt",
            ".ci/envs/lowest.lock",
            ".ci/envs/newest.lock",
        )
    ]
    pyproject.write_text(text.replace("line-length = 100", "line-length = 99"))
    assert _check(root).returncode == 0  # settings outside the dependency tables change no lock


def test_an_environments_input_changed_without_its_lock_is_named(tmp_path: Path) -> None:
    root = _copy_inputs(tmp_path)
    pins = root / ".ci" / "envs" / "inspect.txt"
    pins.write_text(pins.read_text(encoding="utf-8") + "rich\n", encoding="utf-8")
    stale = _check(root)
    assert stale.returncode == 1
    assert stale.stderr.strip() == ".ci/envs/inspect.lock is out of date: run bash .ci/lock"
