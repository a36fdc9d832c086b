"""Separate virtual environments for tests whose packages clash with the project's pins.

Each is built once by ``bash .ci/build-env NAME`` (``.ci/setup`` builds them all before the
suite) into a cache outside the clone; a test asks for the environment's Python here, which
builds it first when it is missing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

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
