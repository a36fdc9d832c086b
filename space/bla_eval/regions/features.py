"""One image's region features and the two views of them that region-based models read.

LXMERT (transformers) reads the features with their boxes normalised to ``[x1/w, y1/h, x2/w,
y2/h]``; VOLTA's controlled models read a global feature first (the mean of the regions, box
``[0, 0, 1, 1, 1]``) and five-dimensional boxes ``[x1/w, y1/h, x2/w, y2/h, area]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RegionFeatures:
    """The regions of one image: ``features`` [N, D] float32, ``boxes`` [N, 4] float32 in pixels
    (``x1, y1, x2, y2``), and the image's ``(height, width)``."""

    features: np.ndarray
    boxes: np.ndarray
    image_size: tuple[int, int]

    def __post_init__(self) -> None:
        features, boxes = np.asarray(self.features), np.asarray(self.boxes)
        if features.ndim != 2 or boxes.shape != (features.shape[0], 4):
            raise ValueError(
                f"region features must be [N, D] with boxes [N, 4]; got {features.shape} and "
                f"{boxes.shape}"
            )
        height, width = self.image_size
        if height <= 0 or width <= 0:
            raise ValueError(f"image size must be positive, got {self.image_size}")
        if not (np.isfinite(features).all() and np.isfinite(boxes).all()):
            raise ValueError("region features and boxes must be finite")
        object.__setattr__(self, "features", features.astype(np.float32, copy=False))
        object.__setattr__(self, "boxes", boxes.astype(np.float32, copy=False))

    @property
    def count(self) -> int:
        """The number of regions."""
        return int(self.features.shape[0])

    def normalised_boxes(self) -> np.ndarray:
        """The boxes as fractions of the image: ``[x1/w, y1/h, x2/w, y2/h]`` (LXMERT's input)."""
        height, width = self.image_size
        scale = np.array([width, height, width, height], dtype=np.float32)
        return self.boxes / scale

    def volta_view(self) -> tuple[np.ndarray, np.ndarray]:
        """VOLTA's visual input: the global feature (the regions' mean) first, then the regions;
        boxes ``[x1/w, y1/h, x2/w, y2/h, area]``, the global box ``[0, 0, 1, 1, 1]``."""
        boxes = self.normalised_boxes()
        area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
        regions = np.concatenate([boxes, area[:, None]], axis=1)
        whole = np.array([[0, 0, 1, 1, 1]], dtype=np.float32)
        mean = self.features.mean(axis=0, keepdims=True)
        return (
            np.concatenate([mean, self.features]).astype(np.float32),
            np.concatenate([whole, regions]).astype(np.float32),
        )
