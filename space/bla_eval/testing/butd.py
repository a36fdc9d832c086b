"""Random-weight bottom-up-attention detectors in the released checkpoint's layout.

:data:`RELEASED` is ``unc-nlp/frcnn-vg-finetuned``'s ``config.yaml`` as transformers' research
project (``examples/research_projects/lxmert``) reads it: every setting its ``GeneralizedRCNN``
and ``Preprocess`` read, at the released sizes (ResNet-101, 1,600 object and 400 attribute
classes, 12 anchors); :func:`tiny_config` shrinks the widths and the classes. :func:`build_butd`
saves a folder the detector loads as it loads the real one: ``config.yaml`` and a
``pytorch_model.bin`` with the released checkpoint's keys (the attribute head and the batch-norm
counters included), drawn from torch's random generator.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from PIL import Image

from ..regions.detector import (
    CONFIG,
    WEIGHTS,
    BottomUpDetector,
    DetectorConfig,
    checkpoint_key,
    upper_keys,
)

RELEASED: dict[str, Any] = {
    "MODEL": {
        "DEVICE": "cpu",
        "PIXEL_MEAN": [102.9801, 115.9465, 122.7717],
        "PIXEL_STD": [1.0, 1.0, 1.0],
        "MAX_POOL": True,
    },
    "BACKBONE": {"FREEZE_AT": 2},
    "RESNETS": {
        "DEPTH": 101,
        "NORM": "BN",
        "STEM_OUT_CHANNELS": 64,
        "RES2_OUT_CHANNELS": 256,
        "NUM_GROUPS": 1,
        "WIDTH_PER_GROUP": 64,
        "STRIDE_IN_1X1": True,
        "RES5_DILATION": 1,
        "OUT_FEATURES": ["res4"],
    },
    "PROPOSAL_GENERATOR": {"MIN_SIZE": 0, "HIDDEN_CHANNELS": 512},
    "ANCHOR_GENERATOR": {
        "SIZES": [[64, 128, 256, 512]],
        "ASPECT_RATIOS": [[0.5, 1.0, 2.0]],
        "OFFSET": 0.0,
    },
    "RPN": {
        "IN_FEATURES": ["res4"],
        "NMS_THRESH": 0.7,
        "BATCH_SIZE_PER_IMAGE": 256,
        "POSITIVE_FRACTION": 0.5,
        "SMOOTH_L1_BETA": 0.0,
        "LOSS_WEIGHT": 1.0,
        "PRE_NMS_TOPK_TRAIN": 12000,
        "PRE_NMS_TOPK_TEST": 6000,
        "POST_NMS_TOPK_TRAIN": 2000,
        "POST_NMS_TOPK_TEST": 300,
        "BOUNDARY_THRESH": -1,
        "BBOX_REG_WEIGHTS": [1.0, 1.0, 1.0, 1.0],
        "IOU_THRESHOLDS": [0.3, 0.7],
        "IOU_LABELS": [0, -1, 1],
    },
    "ROI_HEADS": {
        "NUM_CLASSES": 1600,
        "IN_FEATURES": ["res4"],
        "POSITIVE_FRACTION": 0.25,
        "PROPOSAL_APPEND_GT": True,
        "SCORE_THRESH_TEST": 0.2,
        "NMS_THRESH_TEST": 0.6,
    },
    "ROI_BOX_HEAD": {
        "BBOX_REG_WEIGHTS": [10.0, 10.0, 5.0, 5.0],
        "SMOOTH_L1_BETA": 0.0,
        "POOLER_RESOLUTION": 14,
        "POOLER_SAMPLING_RATIO": 2,
        "CLS_AGNOSTIC_BBOX_REG": False,
        "RES5HALVE": False,
        "ATTR": True,
        "NUM_ATTRS": 400,
    },
    "INPUT": {"MIN_SIZE_TEST": 600, "MAX_SIZE_TEST": 1000, "FORMAT": "BGR"},
    "SIZE_DIVISIBILITY": 0,
    "PAD_VALUE": 0.0,
    "MIN_DETECTIONS": 10,
    "max_detections": 36,
}
"""The released ``config.yaml``'s settings, in its layout (the reference aliases each key to its
upper case, so ``max_detections`` is also ``MAX_DETECTIONS``)."""


def tiny_config(num_classes: int = 20, num_attrs: int = 8) -> dict[str, Any]:
    """:data:`RELEASED` at tiny sizes: ResNet-50's blocks 2 to 128 channels wide, a 16-channel
    RPN, ``num_classes`` object and ``num_attrs`` attribute classes."""
    config = copy.deepcopy(RELEASED)
    config["RESNETS"].update(DEPTH=50, STEM_OUT_CHANNELS=8, RES2_OUT_CHANNELS=16, WIDTH_PER_GROUP=2)
    config["PROPOSAL_GENERATOR"]["HIDDEN_CHANNELS"] = 16
    config["ROI_HEADS"]["NUM_CLASSES"] = num_classes
    config["ROI_BOX_HEAD"]["NUM_ATTRS"] = num_attrs
    return config


def detector_config(config: dict[str, Any]) -> DetectorConfig:
    """The detector's settings of a config in the released layout."""
    return DetectorConfig.from_mapping(upper_keys(config), "config")


def cell_anchors(config: dict[str, Any]) -> torch.Tensor:
    """The anchors the reference computes from ``ANCHOR_GENERATOR`` (and stores in the
    checkpoint): per size, per aspect ratio, ``[-w/2, -h/2, w/2, h/2]`` of area ``size**2``."""
    anchors = []
    for size in config["ANCHOR_GENERATOR"]["SIZES"][0]:
        for ratio in config["ANCHOR_GENERATOR"]["ASPECT_RATIOS"][0]:
            width = math.sqrt(size**2.0 / ratio)
            height = ratio * width
            anchors.append([-width / 2.0, -height / 2.0, width / 2.0, height / 2.0])
    return torch.tensor(anchors)


def random_checkpoint(config: dict[str, Any]) -> dict[str, torch.Tensor]:
    """A state dict with the released checkpoint's keys for ``config``: He-scaled convolutions,
    batch norms that keep activations near unit scale (the last of each block damped), an RPN
    whose proposals stay near their anchors, and the unused heads (box regression, attributes)."""
    cfg = detector_config(config)
    skeleton = BottomUpDetector(cfg)
    state: dict[str, torch.Tensor] = {}
    for name, tensor in skeleton.state_dict().items():
        state[checkpoint_key(name)] = _draw(name, tensor.shape)
        if name.endswith("running_var"):
            counter = checkpoint_key(name).replace("running_var", "num_batches_tracked")
            state[counter] = torch.tensor(0)
    state[checkpoint_key("rpn.cell_anchors")] = cell_anchors(config)
    dim, classes = cfg.feature_dim, cfg.num_classes
    attrs = config["ROI_BOX_HEAD"]["NUM_ATTRS"]
    head = "roi_heads.box_predictor."
    for key, shape in (
        ("bbox_pred.weight", (classes * 4, dim)),
        ("bbox_pred.bias", (classes * 4,)),
        ("cls_embedding.weight", (classes + 1, dim // 8)),
        ("fc_attr.weight", (dim // 4, dim + dim // 8)),
        ("fc_attr.bias", (dim // 4,)),
        ("attr_score.weight", (attrs + 1, dim // 4)),
        ("attr_score.bias", (attrs + 1,)),
    ):
        state[head + key] = torch.randn(shape) * 0.01
    return state


def _draw(name: str, shape: torch.Size) -> torch.Tensor:
    """One random tensor of the detector, by its role."""
    if name.endswith("running_mean") or name.endswith(".bias") and "bn" in name:
        return torch.randn(shape) * 0.1
    if name.endswith("running_var"):
        return torch.rand(shape) + 0.5
    if name.endswith(".weight") and ("bn" in name or "downsample.1" in name):
        damp = 0.3 if "bn3" in name or "downsample.1" in name else 1.0
        return (torch.rand(shape) * 0.5 + 0.5) * damp
    if name == "cls_score.weight":
        return torch.randn(shape) * 4.0 / math.sqrt(shape[1])
    if name == "rpn.bbox_pred.weight":
        return torch.randn(shape) * 0.01
    if name.endswith(".weight"):
        fan_in = math.prod(shape[1:])
        return torch.randn(shape) * math.sqrt(2.0 / fan_in)
    return torch.randn(shape) * 0.1


def save_detector(out: Path, config: dict[str, Any]) -> Path:
    """``config.yaml`` and a random ``pytorch_model.bin`` for ``config`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / CONFIG).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    torch.save(random_checkpoint(config), out / WEIGHTS)
    return out


def build_butd(out: Path, texts: list[str]) -> None:
    """The tiny detector of the architecture matrix (``texts`` unused: it reads no text)."""
    del texts
    save_detector(out, tiny_config())


def random_image(seed: int, height: int, width: int) -> Image.Image:
    """A random RGB image: 32-pixel blocks of random colours with Gaussian noise (numpy's PCG64
    with ``seed``), so that the detector sees edges and textures."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (height // 32 + 1, width // 32 + 1, 3))
    tiled = np.repeat(np.repeat(blocks, 32, axis=0), 32, axis=1)[:height, :width]
    noisy = tiled + rng.normal(0.0, 20.0, (height, width, 3))
    return Image.fromarray(noisy.clip(0, 255).astype(np.uint8))
