"""The GPU-bound call into the engine, decorated for ZeroGPU when the ``spaces`` package is present.

``spaces.GPU`` returns the function unchanged outside a ZeroGPU Space (``SPACES_ZERO_GPU`` unset),
so the same code runs on a CPU, a dedicated GPU, or ZeroGPU.
"""

from __future__ import annotations

import os
from typing import Any

try:  # must come before torch touches CUDA on ZeroGPU
    import spaces
except ImportError:  # plain CPU/GPU hosting: no decorator needed
    spaces = None

from bla_eval.config import RunConfig  # noqa: E402  (plain dataclass: no CUDA)

SECONDS_PER_DATAPOINT = {"generative": 1.0, "itm": 0.25}
"""Rough GPU seconds per datapoint (four sentences) by model kind; others use the default."""
DEFAULT_SECONDS_PER_DATAPOINT = 0.1
LOAD_SECONDS = 60
MAX_GPU_SECONDS = 1200


def estimate_gpu_seconds(n_datapoints: int, kind: str | None) -> int:
    """GPU seconds to reserve: model loading plus a per-datapoint cost, capped."""
    per_point = SECONDS_PER_DATAPOINT.get(kind or "", DEFAULT_SECONDS_PER_DATAPOINT)
    return int(min(MAX_GPU_SECONDS, LOAD_SECONDS + per_point * max(0, n_datapoints)))


QUOTAS = {"without sign-in": 120, "signed in (free)": 300, "PRO": 2400}
"""Daily ZeroGPU quotas in GPU seconds (Hugging Face's ZeroGPU documentation)."""


def on_zero_gpu() -> bool:
    """Whether the Space runs on ZeroGPU (``SPACES_ZERO_GPU``, set by the Hub)."""
    return os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "true")


def quota_fit(seconds: float, kind: str | None) -> int:
    """How many datapoints one run can score in ``seconds`` of GPU time (at most one run's
    :data:`MAX_GPU_SECONDS`) at the estimated rate of ``kind``, model loading first; 0 when
    loading alone does not fit."""
    per_point = SECONDS_PER_DATAPOINT.get(kind or "", DEFAULT_SECONDS_PER_DATAPOINT)
    return max(0, int((min(seconds, MAX_GPU_SECONDS) - LOAD_SECONDS) / per_point))


def _duration(config: RunConfig, n_datapoints: int, progress: Any = None) -> int:
    """ZeroGPU duration callback: called with the same arguments as ``evaluate_on_gpu``."""
    return estimate_gpu_seconds(n_datapoints, config.kind)


def evaluate_on_gpu(config: RunConfig, n_datapoints: int, progress: Any = None) -> dict:
    """Run ``bla_eval.run.evaluate(config)``, reporting to ``progress`` (a ``gr.Progress``).

    Remote code is never allowed here, whatever ``config`` says.
    """
    from bla_eval.run import evaluate

    def report(done: int, total: int, desc: str) -> None:
        if progress is not None:
            progress((done, total), desc=desc, unit="datapoints")

    return evaluate(config.with_(trust_remote_code=False), progress=report)


if spaces is not None:
    evaluate_on_gpu = spaces.GPU(duration=_duration)(evaluate_on_gpu)
