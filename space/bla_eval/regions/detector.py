"""The bottom-up-attention Faster R-CNN (Anderson et al. 2018): region features for LXMERT and
VOLTA's models, from the released checkpoint ``unc-nlp/frcnn-vg-finetuned``.

The network is the Caffe model of ``peteanderson80/bottom-up-attention`` as transformers' research
project (``examples/research_projects/lxmert``: ``modeling_frcnn.py``) runs it: a ResNet C4
backbone with frozen batch norms (the stride in the 1x1 convolutions, Caffe's max pooling), a
region proposal network on res4 (anchors from the checkpoint, proposals clipped, emptied boxes
dropped, NMS), 14x14 RoI max pooling at stride 16, res5 with stride 1 and dilation 2 (the Visual
Genome model's ``RES5HALVE: False``), features averaged to one vector per region, and the object
classifier. Which regions are kept follows the Caffe release's ``generate_tsv.py`` with 36 boxes:
per class, NMS at 0.3 over the proposals; a proposal's confidence is its best score among the
classes where it survived; the ``boxes`` most confident proposals are kept, each with its
proposal box (not the class-regressed box) in the original image's pixels and its pooled
feature. Ties keep the order of the proposals (their objectness); an image with fewer proposals
than ``boxes`` after the proposal NMS takes the best suppressed ones, so every image gives exactly
``boxes`` regions.

Built on torchvision's detection ops (``roi_pool``, ``nms``, ``batched_nms``, ``BoxCoder``,
``FrozenBatchNorm2d``). The checkpoint is loaded through :data:`PREFIXES` and :data:`PARTS` (this
module's names to the checkpoint's), strictly: each of its keys is used or listed in
:data:`UNUSED` with the reason, and each weight of the network comes from it.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import yaml
from PIL import Image
from torch import nn
from torchvision.models.detection._utils import BoxCoder
from torchvision.ops import FrozenBatchNorm2d, batched_nms, nms, roi_pool

from .features import RegionFeatures
from .preprocess import detector_input

CONFIG = "config.yaml"
WEIGHTS = "pytorch_model.bin"
CLASS_NMS = 0.3
"""The per-class NMS threshold of the Caffe release's feature extraction (``cfg.TEST.NMS``)."""
FEATURE_STRIDE = 16
MIN_SIZE = 600
"""The shorter image side the detector resizes to by default, in pixels (the Caffe setting
VOLTA's and LXMERT's features were made with)."""
MAX_SIZE = 1000
"""The longest image side by default, in pixels."""
BOXES = 36
"""Regions per image by default (the Caffe release's exactly 36)."""
"""res4's stride: the RPN's anchor step and the RoI pooling scale."""
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
BLOCKS = {50: (3, 4, 6), 101: (3, 4, 23), 152: (3, 8, 36)}
"""Bottleneck blocks of res2, res3 and res4 by ResNet depth."""

PREFIXES = (
    ("backbone.conv1.", "backbone.stem.conv1."),
    ("backbone.bn1.", "backbone.stem.conv1.norm."),
    ("backbone.layer1.", "backbone.res2."),
    ("backbone.layer2.", "backbone.res3."),
    ("backbone.layer3.", "backbone.res4."),
    ("res5.", "roi_heads.res5."),
    ("rpn.conv.", "proposal_generator.rpn_head.conv."),
    ("rpn.cls_logits.", "proposal_generator.rpn_head.objectness_logits."),
    ("rpn.bbox_pred.", "proposal_generator.rpn_head.anchor_deltas."),
    ("rpn.cell_anchors", "proposal_generator.anchor_generator.cell_anchors.0"),
    ("cls_score.", "roi_heads.box_predictor.cls_score."),
)
"""This module's name prefixes and the checkpoint's (the first that matches applies)."""
PARTS = (
    (".bn1.", ".conv1.norm."),
    (".bn2.", ".conv2.norm."),
    (".bn3.", ".conv3.norm."),
    (".downsample.0.", ".shortcut."),
    (".downsample.1.", ".shortcut.norm."),
)
"""Inside a bottleneck block: this module's names and the checkpoint's."""
UNUSED = (
    ("*.num_batches_tracked", "batch-norm update counters: the batch norms are frozen"),
    (
        "roi_heads.box_predictor.bbox_pred.*",
        "class-specific box regression: each region keeps its proposal box, as the Caffe "
        "release's features do",
    ),
    ("roi_heads.box_predictor.cls_embedding.*", "the attribute head: not part of the features"),
    ("roi_heads.box_predictor.fc_attr.*", "the attribute head: not part of the features"),
    ("roi_heads.box_predictor.attr_score.*", "the attribute head: not part of the features"),
)
"""Checkpoint keys the detector does not use (``fnmatch`` patterns) and why."""


def checkpoint_key(name: str) -> str:
    """The checkpoint's key of this module's parameter or buffer ``name``."""
    for mine, theirs in PREFIXES:
        if name.startswith(mine):
            name = theirs + name[len(mine) :]
            break
    for mine, theirs in PARTS:
        name = name.replace(mine, theirs)
    return name


def unused_reason(key: str) -> str | None:
    """Why the detector does not use checkpoint key ``key``, or None when it does."""
    return next((why for pattern, why in UNUSED if fnmatch.fnmatchcase(key, pattern)), None)


@dataclass(frozen=True)
class DetectorConfig:
    """The settings of ``config.yaml`` (the released layout, as the reference reads it) that
    decide the network and its proposals."""

    pixel_mean: tuple[float, ...]
    pixel_std: tuple[float, ...]
    caffe_maxpool: bool
    depth: int
    stem_channels: int
    res2_channels: int
    groups: int
    width_per_group: int
    stride_in_1x1: bool
    rpn_hidden: int
    rpn_min_size: float
    rpn_nms: float
    rpn_pre_nms: int
    rpn_post_nms: int
    rpn_weights: tuple[float, ...]
    anchors: int
    anchor_offset: float
    num_classes: int
    pool_size: int
    res5_halve: bool

    @classmethod
    def from_yaml(cls, path: Path) -> DetectorConfig:
        """Read ``path``; a missing or unsupported setting is a one-line ValueError naming it."""
        try:
            raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_ConfigLoader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            raise ValueError(f"{path}: not a readable YAML file ({type(err).__name__})") from None
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: not a mapping of settings")
        return cls.from_mapping(upper_keys(raw), str(path))

    @classmethod
    def from_mapping(cls, cfg: dict, source: str) -> DetectorConfig:
        """The settings of a parsed ``config.yaml`` whose keys are upper case."""

        def get(dotted: str) -> Any:
            node: Any = cfg
            for part in dotted.split("."):
                if not isinstance(node, dict) or part not in node:
                    raise ValueError(f"{source}: no setting {dotted}")
                node = node[part]
            return node

        for name in ("RESNETS.OUT_FEATURES", "RPN.IN_FEATURES", "ROI_HEADS.IN_FEATURES"):
            if list(get(name)) != ["res4"]:
                raise ValueError(f"{source}: {name} must be [res4] (a C4 detector)")
        if get("RESNETS.DEPTH") not in BLOCKS:
            raise ValueError(f"{source}: RESNETS.DEPTH must be one of {sorted(BLOCKS)}")
        if str(get("RESNETS.NORM")) not in ("BN", "FrozenBN"):
            raise ValueError(f"{source}: RESNETS.NORM must be BN or FrozenBN (frozen batch norms)")
        sizes, ratios = get("ANCHOR_GENERATOR.SIZES"), get("ANCHOR_GENERATOR.ASPECT_RATIOS")
        return cls(
            pixel_mean=tuple(float(v) for v in get("MODEL.PIXEL_MEAN")),
            pixel_std=tuple(float(v) for v in get("MODEL.PIXEL_STD")),
            caffe_maxpool=bool(get("MODEL.MAX_POOL")),
            depth=int(get("RESNETS.DEPTH")),
            stem_channels=int(get("RESNETS.STEM_OUT_CHANNELS")),
            res2_channels=int(get("RESNETS.RES2_OUT_CHANNELS")),
            groups=int(get("RESNETS.NUM_GROUPS")),
            width_per_group=int(get("RESNETS.WIDTH_PER_GROUP")),
            stride_in_1x1=bool(get("RESNETS.STRIDE_IN_1X1")),
            rpn_hidden=int(get("PROPOSAL_GENERATOR.HIDDEN_CHANNELS")),
            rpn_min_size=float(get("PROPOSAL_GENERATOR.MIN_SIZE")),
            rpn_nms=float(get("RPN.NMS_THRESH")),
            rpn_pre_nms=int(get("RPN.PRE_NMS_TOPK_TEST")),
            rpn_post_nms=int(get("RPN.POST_NMS_TOPK_TEST")),
            rpn_weights=tuple(float(v) for v in get("RPN.BBOX_REG_WEIGHTS")),
            anchors=len(sizes[0]) * len(ratios[0]),
            anchor_offset=float(get("ANCHOR_GENERATOR.OFFSET")),
            num_classes=int(get("ROI_HEADS.NUM_CLASSES")),
            pool_size=int(get("ROI_BOX_HEAD.POOLER_RESOLUTION")),
            res5_halve=bool(get("ROI_BOX_HEAD.RES5HALVE")),
        )

    @property
    def res4_channels(self) -> int:
        return self.res2_channels * 4

    @property
    def feature_dim(self) -> int:
        """The pooled feature's size (res5's channels: 2048 for the released model)."""
        return self.res2_channels * 8


class _ConfigLoader(yaml.SafeLoader):
    """YAML's safe loader that reads a Python tuple tag (detectron2's dumps) as a list."""


_ConfigLoader.add_constructor(
    "tag:yaml.org,2002:python/tuple", lambda loader, node: loader.construct_sequence(node)
)


def upper_keys(node: Any) -> Any:
    """``node`` with every mapping key upper case (the reference's config aliases each key so)."""
    if isinstance(node, dict):
        return {str(k).upper(): upper_keys(v) for k, v in node.items()}
    return node


class Bottleneck(nn.Module):
    """ResNet's bottleneck block with frozen batch norms; ``strides`` are those of conv1, conv2
    and the projection shortcut (present where the channels change)."""

    def __init__(
        self,
        in_channels: int,
        mid: int,
        out_channels: int,
        strides: tuple[int, int, int],
        groups: int,
        dilation: int,
    ) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, mid, 1, stride=strides[0], bias=False)
        self.bn1 = FrozenBatchNorm2d(mid)
        self.conv2 = nn.Conv2d(
            mid, mid, 3, strides[1], dilation, dilation=dilation, groups=groups, bias=False
        )
        self.bn2 = FrozenBatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out_channels, 1, bias=False)
        self.bn3 = FrozenBatchNorm2d(out_channels)
        self.downsample = None
        if in_channels != out_channels:
            projection = nn.Conv2d(in_channels, out_channels, 1, stride=strides[2], bias=False)
            self.downsample = nn.Sequential(projection, FrozenBatchNorm2d(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = torch.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(out + shortcut)


def _stage(
    cfg: DetectorConfig,
    blocks: int,
    channels: tuple[int, int, int],
    stride: int,
    dilation: int = 1,
    first_strides: tuple[int, int, int] | None = None,
) -> nn.Sequential:
    """``blocks`` bottlenecks with ``(in, mid, out)`` channels; the first has ``stride`` (in
    conv1 or conv2 as ``STRIDE_IN_1X1`` says) unless ``first_strides`` gives its three."""
    in_channels, mid, out_channels = channels
    strided = (stride, 1, stride) if cfg.stride_in_1x1 else (1, stride, stride)
    layers = []
    for i in range(blocks):
        strides = (first_strides or strided) if i == 0 else (1, 1, 1)
        block_in = in_channels if i == 0 else out_channels
        layers.append(Bottleneck(block_in, mid, out_channels, strides, cfg.groups, dilation))
    return nn.Sequential(*layers)


class ResNetC4(nn.Module):
    """The stem and res2 to res4 (stride 16)."""

    def __init__(self, cfg: DetectorConfig) -> None:
        super().__init__()
        self.caffe_maxpool = cfg.caffe_maxpool
        self.conv1 = nn.Conv2d(len(cfg.pixel_mean), cfg.stem_channels, 7, 2, 3, bias=False)
        self.bn1 = FrozenBatchNorm2d(cfg.stem_channels)
        in_channels, mid, out_channels = (
            cfg.stem_channels,
            cfg.groups * cfg.width_per_group,
            cfg.res2_channels,
        )
        strides = (1, 2, 2)
        for index, (blocks, stride) in enumerate(zip(BLOCKS[cfg.depth], strides, strict=True), 1):
            stage = _stage(cfg, blocks, (in_channels, mid, out_channels), stride)
            self.add_module(f"layer{index}", stage)
            in_channels, mid, out_channels = out_channels, mid * 2, out_channels * 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        if self.caffe_maxpool:
            x = nn.functional.max_pool2d(x, 3, 2, 0, ceil_mode=True)
        else:
            x = nn.functional.max_pool2d(x, 3, 2, 1)
        return self.layer3(self.layer2(self.layer1(x)))


def _res5(cfg: DetectorConfig) -> nn.Sequential:
    """The RoI head's res5: stride 2, or (``RES5HALVE: False``) stride 1 and dilation 2."""
    channels = (cfg.res4_channels, cfg.groups * cfg.width_per_group * 8, cfg.feature_dim)
    if cfg.res5_halve:
        return _stage(cfg, 3, channels, 2)
    first = (1, 1 if cfg.stride_in_1x1 else 2, 1)
    return _stage(cfg, 3, channels, 2, dilation=2, first_strides=first)


class RegionProposals(nn.Module):
    """The RPN head on res4 and its proposals: decoded anchors, the ``pre_nms`` best clipped to
    the image, boxes not wider and taller than ``min_size`` dropped, NMS, the ``post_nms`` best."""

    def __init__(self, cfg: DetectorConfig) -> None:
        super().__init__()
        hidden = cfg.res4_channels if cfg.rpn_hidden == -1 else cfg.rpn_hidden
        self.cfg = cfg
        self.conv = nn.Conv2d(cfg.res4_channels, hidden, 3, 1, 1)
        self.cls_logits = nn.Conv2d(hidden, cfg.anchors, 1)
        self.bbox_pred = nn.Conv2d(hidden, cfg.anchors * 4, 1)
        self.register_buffer("cell_anchors", torch.zeros(cfg.anchors, 4))
        self.coder = BoxCoder(cfg.rpn_weights, bbox_xform_clip=math.log(1000.0 / 16))

    def anchors(self, height: int, width: int) -> torch.Tensor:
        """Every anchor of a ``height`` x ``width`` feature map: position-major, ``[H*W*A, 4]``."""
        start = self.cfg.anchor_offset * FEATURE_STRIDE
        device = self.cell_anchors.device
        xs = torch.arange(start, width * FEATURE_STRIDE, FEATURE_STRIDE, device=device)
        ys = torch.arange(start, height * FEATURE_STRIDE, FEATURE_STRIDE, device=device)
        shift_y, shift_x = torch.meshgrid(ys.float(), xs.float(), indexing="ij")
        shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
        shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
        return (shifts.view(-1, 1, 4) + self.cell_anchors.view(1, -1, 4)).reshape(-1, 4)

    def forward(self, features: torch.Tensor, size: tuple[int, int], least: int) -> torch.Tensor:
        """The proposals ``[R, 4]`` of a ``size`` = (h, w) image, best first; at least
        ``least`` where enough boxes survive the clipping (the suppressed ones fill up)."""
        hidden = torch.relu(self.conv(features))
        logits = self.cls_logits(hidden)
        _, anchors, height, width = logits.shape
        logits = logits.permute(0, 2, 3, 1).reshape(-1)
        deltas = self.bbox_pred(hidden).view(1, anchors, 4, height, width)
        deltas = deltas.permute(0, 3, 4, 1, 2).reshape(-1, 4)
        boxes = self.coder.decode_single(deltas, self.anchors(height, width))
        logits, order = logits.sort(descending=True)
        logits, boxes = logits[: self.cfg.rpn_pre_nms], boxes[order[: self.cfg.rpn_pre_nms]]
        boxes = _clip(boxes, size)
        widths, heights = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        nonempty = (widths > self.cfg.rpn_min_size) & (heights > self.cfg.rpn_min_size)
        boxes, logits = boxes[nonempty], logits[nonempty]
        levels = torch.zeros(len(boxes), dtype=torch.int64, device=boxes.device)
        keep = batched_nms(boxes, logits, levels, self.cfg.rpn_nms)[: self.cfg.rpn_post_nms]
        keep = keep[logits[keep].sort(descending=True).indices]
        if len(keep) < least:
            suppressed = torch.ones(len(boxes), dtype=torch.bool, device=boxes.device)
            suppressed[keep] = False
            extra = suppressed.nonzero().squeeze(1)[: least - len(keep)]
            keep = torch.cat([keep, extra])
        return boxes[keep]


def _clip(boxes: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """``boxes`` clamped inside an image of ``size`` = (h, w)."""
    height, width = size
    x = boxes[:, 0::2].clamp(min=0, max=width)
    y = boxes[:, 1::2].clamp(min=0, max=height)
    return torch.stack((x[:, 0], y[:, 0], x[:, 1], y[:, 1]), dim=1)


def caffe_selection(boxes: torch.Tensor, scores: torch.Tensor, count: int) -> torch.Tensor:
    """The indices of the ``count`` proposals the Caffe release keeps, most confident first:
    NMS at :data:`CLASS_NMS` per foreground class (``scores`` ``[R, C+1]``, background last); a
    proposal's confidence is its best score among the classes where it survived."""
    confidence = torch.zeros(len(boxes), device=boxes.device)
    for cls in range(scores.shape[1] - 1):
        keep = nms(boxes, scores[:, cls], CLASS_NMS)
        confidence[keep] = torch.maximum(confidence[keep], scores[keep, cls])
    return torch.sort(confidence, descending=True, stable=True).indices[:count]


class BottomUpDetector(nn.Module):
    """The detector: :meth:`from_pretrained` loads it, :meth:`detect` gives each image's
    ``boxes`` regions (features ``[boxes, 2048]``, boxes in the image's pixels)."""

    def __init__(
        self,
        cfg: DetectorConfig,
        *,
        min_size: int = MIN_SIZE,
        max_size: int = MAX_SIZE,
        boxes: int = BOXES,
        source: str = "",
        revision: str | None = None,
        sha256: str | None = None,
    ) -> None:
        super().__init__()
        if min_size <= 0 or max_size < min_size or boxes <= 0:
            raise ValueError(
                f"detector sizes must be 0 < min_size <= max_size and boxes > 0; got "
                f"{min_size}, {max_size}, {boxes}"
            )
        self.cfg, self.min_size, self.max_size, self.boxes = cfg, min_size, max_size, boxes
        self.source, self.revision, self.sha256 = source, revision, sha256
        self.backbone = ResNetC4(cfg)
        self.rpn = RegionProposals(cfg)
        self.res5 = _res5(cfg)
        self.cls_score = nn.Linear(cfg.feature_dim, cfg.num_classes + 1)

    @classmethod
    def from_pretrained(
        cls,
        path_or_id: str,
        *,
        min_size: int = MIN_SIZE,
        max_size: int = MAX_SIZE,
        boxes: int = BOXES,
        device: str = "cpu",
    ) -> BottomUpDetector:
        """The detector of a folder or Hub repo holding ``config.yaml`` and
        ``pytorch_model.bin`` in the released layout, resizing to ``min_size``/``max_size``
        and keeping ``boxes`` regions per image, in float32 on ``device`` (``auto``: CUDA when
        available)."""
        from ..scorers.local import resolve_device

        place = resolve_device(device)
        folder, revision = locate(path_or_id)
        cfg = DetectorConfig.from_yaml(folder / CONFIG)
        sha256 = None if revision else _content_hash(folder)
        model = cls(
            cfg,
            min_size=min_size,
            max_size=max_size,
            boxes=boxes,
            source=str(path_or_id),
            revision=revision,
            sha256=sha256,
        )
        model.load_checkpoint(read_checkpoint(folder / WEIGHTS))
        return model.to(place).eval().requires_grad_(False)

    def load_checkpoint(self, state: dict[str, torch.Tensor]) -> None:
        """Copy the released checkpoint's tensors in (see :func:`load_plan`)."""
        plan = load_plan(self, {k: tuple(v.shape) for k, v in state.items()})
        own = self.state_dict()
        with torch.no_grad():
            for name, key in plan.items():
                own[name].copy_(state[key])

    def describe(self) -> dict[str, Any]:
        """What a run records of the regions: the detector as given, its Hub revision (a Hub
        id) or its files' SHA-256 (a folder), the resize and the box count."""
        return {
            "detector": self.source,
            "revision": self.revision,
            "sha256": self.sha256,
            "resize": [self.min_size, self.max_size],
            "boxes": self.boxes,
        }

    @torch.inference_mode()
    def detect(self, images: list[Image.Image]) -> list[RegionFeatures]:
        """Each image's regions: exactly ``boxes`` of them, inside the image."""
        return [self._detect(image) for image in images]

    def _detect(self, image: Image.Image) -> RegionFeatures:
        width, height = image.size
        device = self.cls_score.weight.device
        pixels, size = detector_input(
            image, self.min_size, self.max_size, self.cfg.pixel_mean, self.cfg.pixel_std, device
        )
        res4 = self.backbone(pixels)
        proposals = self.rpn(res4, size, self.boxes)
        if len(proposals) < self.boxes:
            raise ValueError(
                f"an image of {width}x{height} pixels gives {len(proposals)} region proposals, "
                f"fewer than the {self.boxes} asked"
            )
        pooled = roi_pool(res4, [proposals], self.cfg.pool_size, 1.0 / FEATURE_STRIDE)
        features = self.res5(pooled).mean(dim=(2, 3))
        scores = self.cls_score(features).softmax(dim=-1)
        scale = torch.tensor([height, width]) / torch.tensor(list(size))
        boxes = proposals * scale[[1, 0, 1, 0]].to(device)
        keep = caffe_selection(boxes, scores, self.boxes)
        boxes = _clip(boxes[keep], (height, width))
        return RegionFeatures(
            features=features[keep].float().cpu().numpy(),
            boxes=boxes.float().cpu().numpy(),
            image_size=(height, width),
        )


def load_plan(model: nn.Module, shapes: dict[str, tuple[int, ...]]) -> dict[str, str]:
    """Which checkpoint key fills each of ``model``'s tensors, given the checkpoint's keys and
    shapes: every key is used or in :data:`UNUSED`, every tensor filled with its shape, else a
    one-line ValueError naming the keys."""
    own = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    plan = {name: checkpoint_key(name) for name in own}
    missing = [key for key in plan.values() if key not in shapes]
    used = set(plan.values())
    unknown = [k for k in shapes if k not in used and unused_reason(k) is None]
    wrong = [
        f"{key} {list(shapes[key])} (expected {list(own[name])})"
        for name, key in plan.items()
        if key in shapes and shapes[key] != own[name]
    ]
    for problem, keys in (("lacks", missing), ("has unknown keys", unknown), ("has", wrong)):
        if keys:
            more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
            raise ValueError(f"the checkpoint {problem} {', '.join(keys[:3])}{more}")
    return plan


def locate(path_or_id: str) -> tuple[Path, str | None]:
    """The local folder of ``path_or_id`` and its Hub revision (None for a local folder): a
    folder as it is, a Hub id (``org/name``) downloaded, or through the local cache offline."""
    path = Path(path_or_id).expanduser()
    if path.is_dir():
        folder, revision = path, None
    elif path.exists():
        raise ValueError(f"detector {path_or_id!r} is not a folder")
    elif HUB_ID_RE.match(path_or_id) and not path_or_id.startswith((".", "~")):
        folder = _download(path_or_id)
        revision = folder.name
    else:
        raise ValueError(f"detector {path_or_id!r} is not a local folder and not a Hub id")
    for name in (CONFIG, WEIGHTS):
        if not (folder / name).is_file():
            raise ValueError(
                f"detector folder {folder} has no {name} (a bottom-up-attention detector holds "
                f"{CONFIG} and {WEIGHTS}, as unc-nlp/frcnn-vg-finetuned)"
            )
    return folder, revision


def _download(repo_id: str) -> Path:
    """The snapshot folder (named by its commit) of the Hub repo's config and weights."""
    import huggingface_hub

    try:
        snapshot = huggingface_hub.snapshot_download(repo_id, allow_patterns=[CONFIG, WEIGHTS])
    except Exception as err:  # noqa: BLE001 (not found, offline without a cache, network)
        raise ValueError(
            f"detector {repo_id!r} could not be fetched from the Hub ({type(err).__name__}): "
            "check the id and the connection, or give a local folder"
        ) from None
    return Path(snapshot)


def read_checkpoint(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of ``path`` (a PyTorch state dict, read without running code)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 (truncated, not a checkpoint, pickled code)
        raise ValueError(
            f"{path}: not a readable PyTorch state dict ({type(err).__name__})"
        ) from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path}: not a mapping of names to tensors")
    return state


def _content_hash(folder: Path) -> str:
    """SHA-256 over the detector's two files (names and bytes)."""
    from ..scorers.resolved_model import content_hash

    return content_hash([folder / CONFIG, folder / WEIGHTS], folder)
