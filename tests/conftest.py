"""Shared fixtures: the real release, and the dataset repo built from it once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE = REPO_ROOT.parent / "shared" / "data" / "BLA_Benchmark"


@pytest.fixture(scope="session")
def release_dir() -> Path:
    """The real BLA release (``BLA_RELEASE_DIR`` or ``../shared/data/BLA_Benchmark``)."""
    path = Path(os.environ.get("BLA_RELEASE_DIR", DEFAULT_RELEASE))
    if not (path / "annotations").is_dir():
        raise FileNotFoundError(f"BLA release not found at {path}; set BLA_RELEASE_DIR")
    return path


@pytest.fixture(scope="session")
def built_dataset(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dataset repo built from the real release, once per session (read-only for tests)."""
    from builders.release import build_release

    out = tmp_path_factory.mktemp("bla_dataset") / "bla"
    build_release(release_dir, out)
    return out
