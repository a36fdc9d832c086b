"""The declared version ranges, tested at both ends: a tier of the suite run by the pytest of the
``lowest`` environment (``.ci/envs/lowest.txt``: each listed package at the lowest release its
range allows, on Python 3.10) and of the ``newest`` one (``.ci/envs/newest.txt``: the newest
releases, on Python 3.13), both built by ``.ci/setup``, on this clone's code.

The tier: the metric, the dataset builder, the three local kinds on tiny models, resume,
``compare`` and the Space's start-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness_envs import REPO_ROOT, harness_python

TIER = (
    "tests/bla_metric/test_bla.py",
    "tests/builders/test_release.py",
    "tests/bla_eval/scorers/test_kinds.py",
    "tests/bla_eval/runs/test_resume.py",
    "tests/bla_eval/analysis/test_compare.py",
    "tests/bla_space/test_ui.py::test_the_space_runs_without_builders",
)
"""The tier's test files (or tests)."""
LEFT_OUT = "not hash_seed and not full_rebuild"
"""Tests of the tier's files that the main run covers and that take minutes here (the text kind
under three hash seeds; a second full build of the release)."""
NOT_YET: dict[str, list[str]] = {}
"""Tests that fail at one end of the ranges (environment name: test ids), left out there until
the bound or the code moves."""


TIERS = {"lowest": "3.10", "newest": "3.13"}
"""Each environment of the tier and its Python."""
TIMEOUT_S = 1800


def tier_command(name: str, basetemp: Path) -> list[str]:
    """The tier's tests run by environment ``name``'s pytest on this clone's code."""
    command = [harness_python(name), "-m", "pytest", *TIER, "-k", LEFT_OUT, "-q", "-n", "0"]
    command += [arg for test in NOT_YET.get(name, []) for arg in ("--deselect", test)]
    command += [
        "-p",
        "no:cacheprovider",
        "--basetemp",
        basetemp,
        "-W",
        "ignore::DeprecationWarning",
    ]
    return [str(c) for c in command]


def tier_env() -> dict[str, str]:
    """This process's environment without its pytest settings (options, xdist's worker) and
    its session's shared builds (the tier builds its own, at its versions)."""
    session = ("PYTEST_ADDOPTS", "PYTEST_XDIST_", "BLA_TESTS_SHARED")
    env = {k: v for k, v in os.environ.items() if not k.startswith(session)}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "space")])
    return env


@pytest.mark.slow
@pytest.mark.parametrize(("name", "python"), TIERS.items())
def test_the_tier_passes_at_each_end_of_the_ranges(name: str, python: str, tmp_path) -> None:
    done = subprocess.run(
        tier_command(name, tmp_path / "work"),
        cwd=REPO_ROOT,
        env=tier_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, f"{name}: {done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    assert " passed" in summary and "skipped" not in summary, summary
    version = subprocess.run(
        [str(harness_python(name)), "-c", "import sys; print(sys.version)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert version.startswith(f"{python}.") and not sys.version.startswith(f"{python}.")
