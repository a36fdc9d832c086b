"""The scorer interface: one class per model kind, each giving one score per (image, sentence)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from PIL import Image


@dataclass(frozen=True)
class LoadOptions:
    """How to load a model: device, dtype, remote code, contrastive similarity, GGUF file name."""

    device: str = "auto"
    dtype: str | None = None
    trust_remote_code: bool = False
    similarity: str = "cosine"
    gguf_file: str | None = None


class Scorer(ABC):
    """Scores sentences against images; higher = more likely true.

    ``score`` receives prepared images (the output of ``prepare_image``, run in prefetch threads)
    and, per image, the distinct sentences to score against it. Kinds that do not look at images set
    ``needs_images = False`` and receive ``None`` for each image.
    """

    kind: ClassVar[str]
    probabilistic: ClassVar[bool] = False
    """True when scores are probabilities (binary view: threshold 0.5), else top-k (binary view)."""
    needs_images: ClassVar[bool] = True

    def __init__(
        self, model_id: str, batch_size: int = 32, options: LoadOptions | None = None
    ) -> None:
        self.model_id = model_id
        self.batch_size = batch_size
        self.options = options or LoadOptions()
        self.device = resolve_device(self.options.device)
        self.dtype = resolve_dtype(self.options.dtype, self.device)

    def prepare_image(self, image: Image.Image) -> Any:
        """Per-image preprocessing that can run in a worker thread (default: the image itself)."""
        return image

    @abstractmethod
    def score(self, images: Sequence[Any], sentences: Sequence[Sequence[str]]) -> list[list[float]]:
        """``scores[i][j]`` = score of ``sentences[i][j]`` for ``images[i]``."""

    def answers(self) -> dict[tuple[int, str], str] | None:
        """Generative kinds: answers of the last ``score`` call by (image index, sentence)."""
        return None

    def describe(self) -> dict[str, Any]:
        """Protocol details recorded in the results (prompt, similarity, padding, ...)."""
        return {}


def resolve_device(device: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU."""
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


def regroup(values: Sequence[float], groups: Sequence[Sequence[str]]) -> list[list[float]]:
    """Split a flat list of values back into the lengths of ``groups``."""
    out, start = [], 0
    for group in groups:
        out.append(list(values[start : start + len(group)]))
        start += len(group)
    return out
