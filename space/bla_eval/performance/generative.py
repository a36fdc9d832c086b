"""Speed of the generative fast path: ``python -m bla_eval.performance.generative``.

One run scores the same BLA images (every datapoint about them, all tasks: about six distinct
sentences per image, as in the whole benchmark) twice with the same randomly initialised model,
with the fast path (each image encoded once, the shared prompt prefix cached) and with the plain
per-pair path (every (image, sentence) pair through the whole model), alternating every two images
so that a change in the machine's load hits both alike, and prints both times, the ratio, the time
per part (each second in one part: the image features are not counted again in the prefix) and
the largest score difference, with the machine's load average before and after. ``--shape``
chooses a model with the sizes of a released checkpoint, built from its config (no download),
its tokenizer a byte-level BPE trained on the benchmark's sentences and prompts (so a prompt has
about as many tokens as with the model's own tokenizer):

- ``smolvlm-256m`` (default): SmolVLM-256M (the Idefics3 architecture: SigLIP-B/16 at 512 px,
  pixel-shuffle connector, SmolLM2-135M), one 512 px view per image (64 image tokens; no image
  splitting);
- ``llava-so400m``: a LLaVA with LLaVA-OneVision-0.5B's tower and decoder (SigLIP-so400m/14 at
  384 px, about 400M parameters, and Qwen2-0.5B), one 384 px view per image: the tower's 729
  image tokens.

``--architecture NAME ...`` times rows of the architecture matrix instead
(``bla_eval.testing.architectures``: tiny two-layer models with their real processors, so the
ratio shows what the path saves in forward passes and tokens at tiny sizes, not at full size).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..cli_common import option
from .options import PairsOptions, parse_options, threads_option
from .pairs import max_score_difference, spread_pairs


def time_paths(
    scorer: Any, images: Sequence[Any], queries: Sequence[Sequence[Any]], images_per_step: int = 2
) -> dict:
    """Score with the scorer's fast path and its plain path, alternating every
    ``images_per_step`` images (so a change in the machine's load hits both alike); seconds,
    scores and time per part of each."""
    from ..scorers.prefix_cache import PLAIN

    fast_path = scorer.path
    out = {p: {"seconds": 0.0, "scores": [], "parts": {}} for p in (fast_path, PLAIN)}
    for at in range(0, len(images), images_per_step):
        step = slice(at, at + images_per_step)
        for path in (fast_path, PLAIN):
            scorer.path = path
            scorer.reset_timings()
            start = time.perf_counter()
            scored = scorer.score(images[step], queries[step])
            out[path]["seconds"] += time.perf_counter() - start
            out[path]["scores"] += scored.scores
            for part, seconds in scorer.timings.items():
                out[path]["parts"][part] = out[path]["parts"].get(part, 0.0) + seconds
    scorer.path = fast_path
    for result in out.values():
        result["parts"] = {k: round(v, 1) for k, v in result["parts"].items()}
    return out


def _smolvlm(out: Path, texts: list[str]) -> Path:
    from ..testing.generative import save_smolvlm_shaped

    return save_smolvlm_shaped(out, texts)


def _llava_so400m(out: Path, texts: list[str]) -> Path:
    from ..testing.released import save_llava_so400m_shaped

    return save_llava_so400m_shaped(out, texts)


SHAPES = {"smolvlm-256m": _smolvlm, "llava-so400m": _llava_so400m}
"""The random-weight models of released sizes ``--shape`` names."""


def load() -> str:
    """The machine's load average over 1, 5 and 15 minutes."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass(frozen=True, kw_only=True)
class GenerativeOptions(PairsOptions):
    """The options of ``python -m bla_eval.performance.generative``."""

    shape: str = option(
        "smolvlm-256m", "the released sizes of the random-weight model", choices=sorted(SHAPES)
    )
    architecture: tuple[str, ...] = option(
        (),
        "rows of the architecture matrix to time (tiny models; default: SmolVLM-shaped)",
        parsed=None,
    )
    device: str = option("cpu", "cpu, cuda or cuda:N")
    images_per_step: int = option(2, "images per turn of each path", type=int)
    threads: int | None = threads_option()


def main(argv: list[str] | None = None) -> None:
    """Time the fast and the plain path of the generative scorer on the same datapoints."""
    from ..benchmarks.bla import default_data

    args = parse_options(GenerativeOptions, "bla_eval.performance.generative", __doc__, argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    data = args.data or default_data()
    items, images, queries = spread_pairs(data, args.images)
    n_pairs = sum(len(q) for q in queries)
    print(
        f"datapoints: {len(items)}, images: {len(images)}, (image, sentence) pairs: {n_pairs}, "
        f"torch threads: {torch.get_num_threads()}"
    )
    texts = [c for item in items for c in item.captions]
    with tempfile.TemporaryDirectory() as tmp:
        if args.architecture:
            from ..testing.architectures import build_cached

            for name in args.architecture:
                print(f"-- {name}")
                model = str(build_cached(name, texts, Path(tmp)))
                report(model, args, images, queries)
            return
        model = args.model or str(SHAPES[args.shape](Path(tmp) / args.shape, texts))
        report(model, args, images, queries)


def report(model: str, args: argparse.Namespace, images: Sequence[Any], queries: Any) -> None:
    """Load ``model``, time both paths and print the times, the ratio and the difference."""
    from ..scorers import LoadOptions, load_scorer

    options = LoadOptions(device=args.device, dtype="float32")
    scorer = load_scorer(model, "generative", args.batch_size, options)
    scorer.score(images[:1], [queries[0][:1]])  # warm-up (allocations, lazy init)
    print(f"load average before: {load()}")
    result = time_paths(scorer, images, queries, args.images_per_step)
    print(f"load average after: {load()}")
    fast, plain = result[scorer.path], result["plain"]
    diff = max_score_difference(fast["scores"], plain["scores"])
    print(f"fast path ({scorer.path}): {fast['seconds']:.1f} s  {fast['parts']}")
    print(f"plain per-pair path: {plain['seconds']:.1f} s  {plain['parts']}")
    print(f"speed-up: {plain['seconds'] / fast['seconds']:.2f}x; max |score difference| {diff:.2e}")


if __name__ == "__main__":
    main()
