"""Speed of region extraction: ``python -m bla_eval.performance.regions``.

Times :meth:`BottomUpDetector.detect <bla_eval.regions.detector.BottomUpDetector.detect>` at the
released checkpoint's sizes (ResNet-101 C4, 1,600 classes: ``bla_eval.testing.butd.RELEASED``)
with random weights, so it needs no download: one image first to warm up, then ``--images``
images one at a time; it prints the seconds per image, the device and the load average before
and after. The images are random blocks of Visual Genome's usual size (``--size``, default
375x500), or the first distinct images of a built dataset (``--data``). ``--device cuda`` times
a GPU (synchronised after each image); ``--shape tiny`` times the tiny detector of the
architecture matrix instead (a check that the script runs, not a speed).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

from ..cli_common import option
from ..devices import check_device
from .options import data_option, parse_options, threads_option


def detector(device: str, min_size: int, max_size: int, shape: str = "released") -> Any:
    """A detector with random weights on ``device``, at the released sizes or tiny."""
    from ..regions.detector import BottomUpDetector
    from ..testing.butd import RELEASED, detector_config, random_checkpoint, tiny_config

    config = RELEASED if shape == "released" else tiny_config()
    torch.manual_seed(0)
    model = BottomUpDetector(detector_config(config), min_size=min_size, max_size=max_size)
    model.load_checkpoint(random_checkpoint(config))
    return model.to(device).eval().requires_grad_(False)


def images_of(data: str | None, count: int, size: tuple[int, int]) -> list[Image.Image]:
    """``count`` images: random ones of ``size`` (h, w), or the first distinct images of the
    dataset ``data``."""
    if data is None:
        from ..testing.butd import random_image

        return [random_image(seed, *size) for seed in range(count)]
    from ..benchmarks.bla import load_bla
    from ..items import decode_image

    seen: dict[str, Image.Image] = {}
    for point in load_bla(data):
        ref = point.images[0]
        if ref.key not in seen:
            seen[ref.key] = decode_image(point, ref)
        if len(seen) == count:
            break
    return list(seen.values())


@dataclass(frozen=True, kw_only=True)
class RegionsOptions:
    """The options of ``python -m bla_eval.performance.regions``."""

    device: str = option("cpu", "cpu, cuda or cuda:N")
    images: int = option(4, "images timed after the warm-up", type=int)
    size: str = option("375x500", "HxW of the random images")
    data: str | None = data_option("time a built dataset's images instead")
    resize: tuple[int, ...] = option(
        (600, 1000),
        "the detector's shorter and longer side",
        type=int,
        nargs=2,
        metavar=("MIN", "MAX"),
        parsed=(600, 1000),
    )
    threads: int | None = threads_option()
    shape: str = option("released", "the detector's sizes", choices=("released", "tiny"))


def main(argv: list[str] | None = None) -> int:
    """Time the detector and print the seconds per image."""
    args = parse_options(
        RegionsOptions, "bla_eval.performance.regions", __doc__.split("\n\n")[0], argv
    )
    device = check_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    height, width = (int(v) for v in args.size.split("x"))
    model = detector(device, *args.resize, shape=args.shape)
    cuda = device.startswith("cuda")
    images = images_of(args.data, args.images + 1, (height, width))
    name = torch.cuda.get_device_name(device) if cuda else f"CPU, {torch.get_num_threads()} threads"
    print(f"device: {name}; load average before: {os.getloadavg()[0]:.1f}")
    model.detect(images[:1])  # warm-up
    seconds = []
    for image in images[1:]:
        start = time.perf_counter()
        model.detect([image])
        if cuda:
            torch.cuda.synchronize(device)
        seconds.append(time.perf_counter() - start)
    mean = sum(seconds) / len(seconds)
    low, high = min(seconds), max(seconds)
    print(
        f"{args.shape} sizes, resize {args.resize[0]}/{args.resize[1]}, {len(seconds)} images: "
        f"{mean:.2f} s per "
        f"image (from {low:.2f} to {high:.2f} s)"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
