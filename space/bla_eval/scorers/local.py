"""Scorers of models loaded on this machine: the device and dtype they run in."""

from __future__ import annotations

import torch

from ..devices import check_device
from .base import Scorer
from .resolved_model import ResolvedModel


class LocalScorer(Scorer):
    """A kind whose model is loaded here: ``device`` and ``dtype`` from ``LoadOptions``."""

    def load(self, model: ResolvedModel) -> None:
        """Place the model here: ``device`` and ``dtype`` from the load options (a subclass
        loads its weights after calling this)."""
        self.device = resolve_device(self.options.device)
        self.dtype = resolve_dtype(self.options.dtype, self.device)


def resolve_device(device: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU (an unknown device is a ValueError naming it)."""
    check_device(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    return torch.device(device)


def resolve_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    """``None``/``auto`` -> float32 on CPU, bfloat16 on CUDA; otherwise the named torch dtype."""
    if dtype in (None, "auto"):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r} (use float32, float16 or bfloat16)")
    return value
