"""Speed of the ``vllm`` kind against the generative kind's fast path:
``python -m bla_eval.performance.vllm`` (in an environment with vLLM, e.g. ``.ci/build-env vllm``).

One run scores the same BLA images (every datapoint about them, all tasks) with the same model
loaded twice, by transformers (the generative kind's fast path: each image encoded once, the
shared prompt prefix cached) and by vLLM's engine (every pair of a step in one batch),
alternating every ``--images-per-step`` images so that a change in the machine's load hits both
alike, and prints both times, the ratio and the largest score difference. The default model is
the tiny random LLaVA the tests use (``bla_eval.testing.generative.build_llava_vllm``); ``--model``
times another. vLLM's engine runs in a process of its own here, so that its CPU thread binding
leaves this process's torch threads to transformers.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli_common import field_like, option
from .options import PairsOptions, parse_options
from .pairs import max_score_difference, spread_pairs


def time_both(
    scorers: dict[str, Any],
    images: Sequence[Any],
    queries: Sequence[Sequence[Any]],
    images_per_step: int,
) -> dict[str, dict]:
    """Seconds and scores of each scorer on the same images, taking turns every
    ``images_per_step`` images."""
    out = {name: {"seconds": 0.0, "scores": []} for name in scorers}
    for at in range(0, len(images), images_per_step):
        step = slice(at, at + images_per_step)
        for name, scorer in scorers.items():
            start = time.perf_counter()
            scored = scorer.score(images[step], queries[step])
            out[name]["seconds"] += time.perf_counter() - start
            out[name]["scores"] += scored.scores
    return out


@dataclass(frozen=True, kw_only=True)
class VllmOptions(PairsOptions):
    """The options of ``python -m bla_eval.performance.vllm``."""

    images: int = field_like(PairsOptions, "images", default=32)
    images_per_step: int = option(8, "images per turn", type=int)
    gpu_memory_utilization: float | None = option(help="vLLM's fraction", type=float)


def main(argv: list[str] | None = None) -> None:
    """Time the generative kind's fast path and the vllm kind on the same datapoints."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "1")  # the engine in its own process
    import torch

    from ..benchmarks.bla import default_data
    from ..scorers import LoadOptions, load_scorer
    from ..scorers.vllm_engine import shutdown_engines
    from ..testing.generative import build_llava_vllm

    args = parse_options(VllmOptions, "bla_eval.performance.vllm", __doc__, argv)
    items, images, queries = spread_pairs(args.data or default_data(), args.images)
    n_pairs = sum(len(q) for q in queries)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            model = str(Path(tmp) / "llava")
            build_llava_vllm(Path(model), [c for item in items for c in item.captions])
        options = LoadOptions(device="cpu", dtype="float32")
        engine = LoadOptions(dtype="float32", gpu_memory_utilization=args.gpu_memory_utilization)
        scorers = {
            "transformers": load_scorer(model, "generative", args.batch_size, options),
            "vllm": load_scorer(model, "vllm", options=engine),
        }
        try:
            for scorer in scorers.values():  # warm-up (allocations, lazy init)
                scorer.score(images[:1], [queries[0][:1]])
            print(
                f"datapoints: {len(items)}, images: {len(images)}, (image, sentence) pairs: "
                f"{n_pairs}, torch threads here: {torch.get_num_threads()}, vLLM "
                f"{scorers['vllm'].version}, {args.images_per_step} images per turn"
            )
            result = time_both(scorers, images, queries, args.images_per_step)
        finally:
            shutdown_engines()
    ours, theirs = result["vllm"], result["transformers"]
    diff = max_score_difference(ours["scores"], theirs["scores"])
    print(f"transformers fast path ({scorers['transformers'].path}): {theirs['seconds']:.2f} s")
    print(f"vLLM engine: {ours['seconds']:.2f} s")
    print(
        f"vLLM / transformers time: {ours['seconds'] / theirs['seconds']:.2f}; "
        f"max |score difference| {diff:.2e}"
    )


if __name__ == "__main__":  # vLLM's engine process imports this file
    main()
