"""The devices a run may name (``--device``), checked without importing torch."""

from __future__ import annotations

import re

DEVICE_RE = re.compile(r"^(auto|cpu|mps|(cuda|xpu)(:\d{1,3})?)$")
"""The devices a run may name: auto, cpu, mps, cuda, cuda:N, xpu, xpu:N."""


def check_device(device: object, flag: str = "--device") -> str:
    """``device`` when it names a device of :data:`DEVICE_RE` (ValueError naming it otherwise);
    whether it is present is checked when the model is loaded."""
    if not isinstance(device, str) or not DEVICE_RE.match(device):
        raise ValueError(
            f"unknown {flag} {device!r}: use auto, cpu, cuda, cuda:N, mps, xpu or xpu:N"
        )
    return device
