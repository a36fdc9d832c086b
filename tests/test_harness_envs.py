"""The harness helpers of the tests: a harness run that wrote nothing fails with its own stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness_envs import harness_outputs


def test_a_harness_that_exits_0_without_samples_fails_with_its_stderr(tmp_path: Path) -> None:
    script = "import sys; print('ImportError: filelock._api', file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    with pytest.raises(pytest.fail.Exception) as failed:
        harness_outputs(done, tmp_path / "out", "*.jsonl")
    assert "exited 0 and wrote 0 *.jsonl" in str(failed.value)
    assert "ImportError: filelock._api" in str(failed.value)


def test_the_files_a_harness_wrote_are_returned(tmp_path: Path) -> None:
    (tmp_path / "out" / "a").mkdir(parents=True)
    (tmp_path / "out" / "a" / "samples.jsonl").write_text("{}\n")
    done = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True)
    assert harness_outputs(done, tmp_path / "out", "*.jsonl") == [
        tmp_path / "out" / "a" / "samples.jsonl"
    ]
