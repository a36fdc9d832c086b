"""Fixtures of the Hub tests: the local stand-in of the Hub's write path, and the environment
that points the real ``huggingface_hub`` client of a child process at it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_local_test_token"
"""The token the child processes send (the stand-in checks that one is sent, not its value)."""


def _load_local_hub():
    spec = importlib.util.spec_from_file_location(
        "local_hub", Path(__file__).with_name("local_hub.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


local_hub_module = _load_local_hub()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator:
    """The stand-in Hub (``LocalHub``), served on 127.0.0.1 for one test and stopped after."""
    server = local_hub_module.HubServer(tmp_path / "hub").start()
    try:
        yield server.hub
    finally:
        server.stop()


@pytest.fixture
def hub_env(hub, tmp_path: Path) -> dict[str, str]:
    """Environment of a child process that talks to the stand-in: ``HF_ENDPOINT``, a token, a
    throwaway ``HF_HOME``, and ``HF_HUB_DISABLE_XET=1`` (the stand-in speaks the LFS protocol,
    not Xet, which ``huggingface_hub`` uses whenever ``hf_xet`` is installed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.pop("PYTHONPATH", None)
    env.update(
        HF_ENDPOINT=hub.url,
        HF_TOKEN=TOKEN,
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    return env


@pytest.fixture
def run_cli(hub_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess]:
    """``run_cli(*args, env=None, cwd=REPO_ROOT)``: ``python <args>`` in a child process with
    ``hub_env`` (updated by ``env``; a value None removes the variable)."""

    def run(*args: str, env: dict | None = None, cwd: Path = REPO_ROOT):
        full = dict(hub_env)
        for key, value in (env or {}).items():
            if value is None:
                full.pop(key, None)
            else:
                full[key] = value
        return subprocess.run(
            [sys.executable, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=600
        )

    return run
