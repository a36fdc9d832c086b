"""Speed of the engine against a per-datapoint loop, with a full-size random CLIP ViT-B/32.

Run ``python -m bla_eval.performance.dual_encoder [--limit N] [--data DIR]``. Both paths score the
same datapoints with the same model (transformers ``CLIPConfig()`` defaults = ViT-B/32 sizes,
random weights, a BPE tokenizer trained on the benchmark's sentences). The loop does what the
original authors' script does: one image and its four sentences per forward pass, padded to 77
tokens.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm.auto import tqdm

from ..benchmarks.bla import default_data, load_bla
from ..cli_common import option
from ..config import RunConfig
from ..items import Item, decode_image
from ..run import evaluate
from ..testing.dual_encoders import save_random_clip
from .options import data_option, parse_options


@torch.inference_mode()
def per_datapoint_loop(model_dir: Path, points: Sequence[Item]) -> list[list[float]]:
    """The baseline: per datapoint, one forward with its image and four sentences padded to 77."""
    from transformers import CLIPModel, CLIPProcessor

    model = CLIPModel.from_pretrained(model_dir).eval()
    processor = CLIPProcessor.from_pretrained(model_dir)
    scores = []
    for point in tqdm(points, desc="per-datapoint loop", unit="datapoint"):
        inputs = processor(
            text=list(point.captions),
            images=decode_image(point, point.images[0]),
            padding="max_length",
            max_length=77,
            truncation=True,
            return_tensors="pt",
        )
        scores.append(model(**inputs).logits_per_image[0].tolist())
    return scores


@dataclass(frozen=True, kw_only=True)
class DualEncoderOptions:
    """The options of ``python -m bla_eval.performance.dual_encoder``."""

    data: str | None = data_option()
    limit: int | None = option(help="first N datapoints per task", type=int)
    batch_size: int = option(32, "sentences per forward pass", type=int)


def main(argv: list[str] | None = None) -> None:
    """Time both paths on the same datapoints and print the absolute times and the ratio."""
    args = parse_options(DualEncoderOptions, "bla_eval.performance.dual_encoder", __doc__, argv)
    data = args.data or default_data()
    points = load_bla(data, limit=args.limit)
    print(f"datapoints: {len(points)}, torch threads: {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = save_random_clip(Path(tmp) / "clip", [c for p in points for c in p.captions])
        start = time.perf_counter()
        config = RunConfig(
            str(model_dir),
            Path(tmp) / "run",
            data=data,
            limit=args.limit,
            batch_size=args.batch_size,
            images_per_batch=args.batch_size,
            device="cpu",
        )
        results = evaluate(config)
        engine_s = time.perf_counter() - start
        start = time.perf_counter()
        per_datapoint_loop(model_dir, points)
        loop_s = time.perf_counter() - start
    print(f"engine: {engine_s:.1f} s (scoring {results['timings']['scoring_s']:.1f} s)")
    print(f"per-datapoint loop: {loop_s:.1f} s")
    print(f"speed-up: {loop_s / engine_s:.2f}x")


if __name__ == "__main__":
    main()
