"""Shared fixtures: the real release, and the dataset repo built from it once per test session."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RELEASE = REPO_ROOT.parent / "shared" / "data" / "BLA_Benchmark"

# `datasets` keeps an Arrow copy of every parquet folder it loads in its cache; the tests build
# datasets in fresh temporary folders, so each session would add copies to the user's cache for
# good. They go to a cache of the session's own (set before `datasets` is imported; child
# processes inherit it), removed at the session's end.
TEST_DATASETS_CACHE = tempfile.mkdtemp(prefix="bla-tests-datasets-cache-")
os.environ["HF_DATASETS_CACHE"] = TEST_DATASETS_CACHE


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's own `datasets` cache."""
    shutil.rmtree(TEST_DATASETS_CACHE, ignore_errors=True)


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


@pytest.fixture(scope="session")
def tiny_clip(built_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real CLIP architecture with random weights and a BPE tokenizer trained on the release
    sentences, saved like a Hub repo (model + processor) and loaded back by path.

    Seeded, so its scores are the same every run: on the first 10 datapoints per task it makes
    set errors in AP, which the Space's Explore test filters to. (Random text towers mostly score
    by the sentence's first words, which pair each true sentence with a false one: no set errors.)
    """
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.testing.dual_encoders import save_random_clip, tiny_clip_config

    points = load_bla(str(built_dataset))
    out = tmp_path_factory.mktemp("tiny_clip") / "clip"
    return save_random_clip(out, [c for p in points for c in p.captions], tiny_clip_config())


@pytest.fixture(scope="module")
def co_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``bla-eval`` run of the tiny CLIP: CO, the first 3 datapoints (read-only)."""
    from bla_eval.cli import main as bla_eval

    from tests.bla_eval.commands import LIMIT, eval_args

    out = tmp_path_factory.mktemp("co") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", LIMIT)
    assert bla_eval(argv) == 0
    return out


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """A function giving a free TCP port on 127.0.0.1, for a server a test starts."""

    def pick() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    return pick


@pytest.fixture(scope="session")
def wait_until_up() -> Callable[..., None]:
    """A function ``wait(url, proc, seconds)`` that returns once ``url`` answers, and fails with
    the server's stderr if ``proc`` exits, or after ``seconds``."""

    def wait(url: str, proc: subprocess.Popen, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()[-3000:]
            try:
                with urllib.request.urlopen(url, timeout=5):
                    return
            except OSError:
                time.sleep(1)
        raise AssertionError(f"the Space did not answer at {url} within {seconds} s")

    return wait
