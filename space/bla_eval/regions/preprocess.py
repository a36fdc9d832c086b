"""The detector's input: an image resized and normalised as the bottom-up-attention Faster R-CNN
reads it (Caffe's convention: BGR channel order, per-channel means subtracted in 0-255 units).

The shorter side is scaled to ``min_size`` unless the longer side would then exceed ``max_size``
(600 and 1000 in the Caffe release, which the features of LXMERT and VOLTA were made with; 800 and
1333 are detectron2's defaults). Resizing is bilinear without antialiasing (Caffe's
``cv2.INTER_LINEAR``), on the float image, as transformers' research-project port does. A side under
:data:`MIN_SIDE` pixels after resizing (an image over 30 times longer than wide) is padded with
zeros (the mean pixel) up to it, below or to the right, as the reference pads a batch; the
proposals stay inside the image itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from PIL import Image

MIN_SIDE = 32
"""The smallest side the network is given (its max pooling needs a few pixels)."""


def resized_size(height: int, width: int, min_size: int, max_size: int) -> tuple[int, int]:
    """``(height, width)`` after scaling the shorter side to ``min_size``, then the whole image
    down until the longer side is at most ``max_size``; each side rounded half up, at least 1."""
    scale = min_size / min(height, width)
    if height < width:
        new_h, new_w = float(min_size), scale * width
    else:
        new_h, new_w = scale * height, float(min_size)
    if max(new_h, new_w) > max_size:
        shrink = max_size / max(new_h, new_w)
        new_h, new_w = new_h * shrink, new_w * shrink
    return max(1, int(new_h + 0.5)), max(1, int(new_w + 0.5))


def bgr_tensor(image: Image.Image) -> torch.Tensor:
    """The image as float32 ``[H, W, 3]`` in BGR order, 0-255."""
    rgb = np.asarray(image.convert("RGB"), dtype=np.uint8)
    return torch.from_numpy(np.ascontiguousarray(rgb[:, :, ::-1])).float()


def detector_input(
    image: Image.Image,
    min_size: int,
    max_size: int,
    pixel_mean: Sequence[float],
    pixel_std: Sequence[float],
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, tuple[int, int]]:
    """``(pixels [1, 3, H, W], (h, w))``: ``image`` resized to ``(h, w)`` by
    :func:`resized_size`, normalised as ``(BGR - pixel_mean) / pixel_std`` and padded to at least
    :data:`MIN_SIDE` pixels a side."""
    pixels = bgr_tensor(image).to(device)
    height, width = pixels.shape[:2]
    size = resized_size(height, width, min_size, max_size)
    chw = pixels.permute(2, 0, 1).unsqueeze(0)
    chw = torch.nn.functional.interpolate(chw, size, mode="bilinear", align_corners=False)
    mean = torch.tensor(list(pixel_mean), device=chw.device).view(1, -1, 1, 1)
    std = torch.tensor(list(pixel_std), device=chw.device).view(1, -1, 1, 1)
    pad_h, pad_w = max(0, MIN_SIDE - size[0]), max(0, MIN_SIDE - size[1])
    return torch.nn.functional.pad((chw - mean) / std, (0, pad_w, 0, pad_h)), size
