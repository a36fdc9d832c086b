"""Fixtures of the engine's tests: one torch thread, a finished run on a learning split."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bla_eval.commands import LIMIT, eval_args


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """Torch on one thread for a module: tiny models on a shared 2-core machine run an order of
    magnitude faster (use with ``pytestmark = pytest.mark.usefixtures("one_thread")``)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def learning_run(tiny_clip, built_dataset, tmp_path_factory) -> Path:
    """A finished zero-shot run on a learning test split (what learning-report reads)."""
    from bla_eval.cli import main as bla_eval

    out = tmp_path_factory.mktemp("learning") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "coordination_learning")
    assert bla_eval([*argv, "--limit", str(LIMIT)]) == 0
    return out
