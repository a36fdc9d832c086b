"""Speed benchmark: the engine vs a per-datapoint loop, with a full-size random CLIP ViT-B/32.

Run ``python -m bla_eval.benchmark [--limit N] [--data DIR]``. Both paths score the same datapoints
with the same model (transformers ``CLIPConfig()`` defaults = ViT-B/32 sizes, random weights, a BPE
tokenizer trained on the benchmark's sentences). The loop does what the original authors' script
does: one image and its four sentences per forward pass, padded to 77 tokens.

``python -m bla_eval.benchmark --kind generative`` times the generative scorer's fast path against
its plain per-pair path instead (``bla_eval.benchmark_generative``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from .benchmarks.bla import default_data, load_bla
from .config import RunConfig
from .items import Item, decode_image
from .run import evaluate


def train_clip_tokenizer(sentences: Iterable[str], vocab_size: int = 49408):
    """A CLIP tokenizer (BPE, ``</w>`` word ends) trained on ``sentences`` with ``tokenizers``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import CLIPTokenizer

    special = ["<|startoftext|>", "<|endoftext|>"]
    bpe = Tokenizer(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    bpe.normalizer = normalizers.Lowercase()
    bpe.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        end_of_word_suffix="</w>",
        show_progress=False,
    )
    bpe.train_from_iterator(sentences, trainer)
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ") if isinstance(m, str) else m) for m in state["merges"]]
    return CLIPTokenizer(vocab=state["vocab"], merges=merges)


def save_random_clip(out: Path, sentences: Sequence[str], config=None) -> Path:
    """Save a randomly initialised CLIP (default: ViT-B/32 sizes) with processor into ``out``."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    config = config or CLIPConfig()
    tokenizer = train_clip_tokenizer(sentences, config.text_config.vocab_size)
    config.text_config.bos_token_id = tokenizer.bos_token_id
    config.text_config.eos_token_id = tokenizer.eos_token_id  # pooled at the first EOS
    config.text_config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(0)
    CLIPModel(config).save_pretrained(out)
    size = config.vision_config.image_size
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": size}, crop_size={"height": size, "width": size}
    )
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out)
    return out


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


def main(argv: list[str] | None = None) -> None:
    """Time both paths on the same datapoints and print the absolute times and the ratio."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--kind" in argv:  # --kind generative: the generative fast path vs its plain path
        at = argv.index("--kind")
        kind = argv[at + 1] if at + 1 < len(argv) else ""
        if kind != "generative":
            raise SystemExit(f"benchmark: --kind {kind!r}: only 'generative' has a benchmark")
        from .benchmark_generative import main as generative_main

        return generative_main(argv[:at] + argv[at + 2 :])
    p = argparse.ArgumentParser(prog="python -m bla_eval.benchmark", description=__doc__)
    p.add_argument("--data", default=None, help="dataset id or folder (default: the project's)")
    p.add_argument("--limit", type=int, default=None, help="first N datapoints per task")
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args(argv)
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
