"""Cost of the likelihood scores: ``python -m bla_eval.performance.scores``.

One run scores the same BLA images (each with the distinct sentences of its datapoints) with one
generative model asked the three ways of ``--score``: ``yes-no``, ``caption`` and
``caption-pmi`` (alpha fixed at 1: the time of choosing it on the learning split is that of
scoring its datapoints), each on its fastest exact path, taking turns every two images so that a
change in the machine's load hits all three alike, and prints each one's seconds and its ratio to
``yes-no``. The prior of ``caption-pmi`` is computed once per distinct sentence, so its share
falls as the images share sentences. Default model: a random-weight model with SmolVLM-256M's
shape (:func:`bla_eval.testing.generative.save_smolvlm_shaped`).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .options import PairsOptions, parse_options, threads_option
from .pairs import spread_pairs

MODES = ("yes-no", "caption", "caption-pmi")


@dataclass(frozen=True, kw_only=True)
class ScoresOptions(PairsOptions):
    """The options of ``python -m bla_eval.performance.scores``."""

    threads: int | None = threads_option()


def main(argv: list[str] | None = None) -> None:
    """Time the three scores of one generative model on the same images."""
    from ..benchmarks.bla import default_data
    from ..scorers import LoadOptions, load_scorer
    from ..testing.generative import save_smolvlm_shaped

    args = parse_options(ScoresOptions, "bla_eval.performance.scores", __doc__, argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    items, images, queries = spread_pairs(args.data or default_data(), args.images)
    print(
        f"images: {len(images)}, (image, sentence) pairs: {sum(len(q) for q in queries)}, "
        f"torch threads: {torch.get_num_threads()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            texts = [c for item in items for c in item.captions]
            model = str(save_smolvlm_shaped(Path(tmp) / "smolvlm-shaped", texts))
        scorers = {
            mode: load_scorer(
                model,
                "generative",
                args.batch_size,
                LoadOptions(device="cpu", dtype="float32", score=mode, pmi_alpha=1.0)
                if mode == "caption-pmi"
                else LoadOptions(device="cpu", dtype="float32", score=mode),
            )
            for mode in MODES
        }
        for scorer in scorers.values():  # warm-up (allocations, lazy init)
            scorer.score(images[:1], [queries[0][:1]])
        seconds = dict.fromkeys(MODES, 0.0)
        for at in range(0, len(images), 2):
            for mode, scorer in scorers.items():
                start = time.perf_counter()
                scorer.score(images[at : at + 2], queries[at : at + 2])
                seconds[mode] += time.perf_counter() - start
    for mode in MODES:
        path = scorers[mode].describe()["forward_path"]
        ratio = seconds[mode] / seconds["yes-no"]
        print(f"{mode}: {seconds[mode]:.1f} s ({path}), {ratio:.2f}x yes-no")


if __name__ == "__main__":
    main()
