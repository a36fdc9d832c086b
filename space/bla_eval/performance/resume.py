"""What a resume costs: ``python -m bla_eval.performance.resume [--limit N] [--data DIR]``.

For each of three kinds (the text kind, a dual encoder, a generative model; tiny random models
of real architectures with BPE tokenizers trained on the benchmark's sentences) one run scores
the first N datapoints of each BLA task uninterrupted; a copy of its folder cut after half of
its records (the state a killed run leaves: the records so far, no ``results.json``) is resumed
with ``--resume``. Printed per kind: both scoring times (``results.json``'s
``timings.scoring_s``), their ratio in wall and in CPU seconds of the process (the scoring
loop's, robust to other processes' load), and whether the resumed ``scores.jsonl`` holds the
uninterrupted bytes. A resume should cost the missing half, not the whole run again.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from ..benchmarks.bla import default_data, load_bla
from ..cli_common import option
from ..config import RunConfig
from ..run import evaluate
from ..runs import RESULTS_FILE, SCORES_FILE
from ..testing.dual_encoders import save_random_clip, tiny_clip_config
from ..testing.generative import build_llama_text, build_llava_chat
from .options import data_option, parse_options, threads_option

KINDS: dict[str, tuple[str, Callable[[Path, list[str]], object]]] = {
    "text": ("text", build_llama_text),
    "dual encoder": (
        "contrastive",
        lambda out, texts: save_random_clip(out, texts, tiny_clip_config()),
    ),
    "generative": ("generative", build_llava_chat),
}
"""Kind shown -> (``--kind``, the builder of its tiny model)."""

TARGET = 0.6
"""The largest ratio of resumed to uninterrupted scoring time a resume after half should cost."""


def cut_at_half(run: Path, out: Path) -> int:
    """A copy of the finished ``run`` in ``out`` as a run killed after half its records left
    it; the number of records kept."""
    shutil.copytree(run, out)
    (out / RESULTS_FILE).unlink()
    lines = (out / SCORES_FILE).read_bytes().splitlines(keepends=True)
    kept = len(lines) // 2
    (out / SCORES_FILE).write_bytes(b"".join(lines[:kept]))
    return kept


class ScoringClock:
    """A run's ``progress`` callback that keeps the process's CPU seconds from the scoring
    loop's first call to its last (robust to other processes' load on a shared machine)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 0.0

    def __call__(self, done: int, total: int, desc: str) -> None:
        if desc.startswith("scoring"):
            self.last = time.process_time()
            self.first = self.last if self.first is None else self.first

    @property
    def seconds(self) -> float:
        return self.last - (self.first or self.last)


def timed(config: RunConfig) -> tuple[float, float]:
    """(wall seconds of scoring, CPU seconds of scoring) of one run."""
    clock = ScoringClock()
    results = evaluate(config, progress=clock)
    return results["timings"]["scoring_s"], clock.seconds


def measure(config: RunConfig, root: Path) -> dict[str, float | bool]:
    """Scoring seconds (wall, CPU) of the uninterrupted run and of a resume after half; whether
    the resumed scores are the uninterrupted bytes."""
    whole_wall, whole_cpu = timed(config)
    stopped = root / "stopped"
    cut_at_half(config.output_dir, stopped)
    wall, cpu = timed(config.with_(output_dir=stopped, resume=True))
    same = (stopped / SCORES_FILE).read_bytes() == (config.output_dir / SCORES_FILE).read_bytes()
    return {
        "wall": wall / max(whole_wall, 1e-9),
        "cpu": cpu / max(whole_cpu, 1e-9),
        "uninterrupted_s": whole_wall,
        "resumed_s": wall,
        "same_bytes": same,
    }


@dataclass(frozen=True, kw_only=True)
class ResumeOptions:
    """The options of ``python -m bla_eval.performance.resume``."""

    data: str | None = data_option()
    limit: int = option(200, "first N datapoints per task", type=int)
    images_per_batch: int = option(8, "images per call", type=int)
    kinds: tuple[str, ...] = option(tuple(KINDS), "kinds measured", choices=tuple(KINDS))
    threads: int = threads_option(1)


def main(argv: list[str] | None = None) -> int:
    """Measure each kind once; exit 1 when a ratio is over :data:`TARGET` or bytes differ."""
    args = parse_options(ResumeOptions, "bla_eval.performance.resume", __doc__, argv)
    torch.set_num_threads(args.threads)
    data = args.data or default_data()
    sentences = [c for item in load_bla(data) for c in item.captions]
    print(f"torch threads: {torch.get_num_threads()}, datapoints per task: {args.limit}")
    failed = False
    for shown in args.kinds:
        kind, build = KINDS[shown]
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "model"
            build(model, sentences)
            config = RunConfig(
                str(model),
                Path(tmp) / "whole",
                data=data,
                kind=kind,
                limit=args.limit,
                images_per_batch=args.images_per_batch,
                device="cpu",
            )
            found = measure(config, Path(tmp))
        ratio = max(found["wall"], found["cpu"])
        failed |= ratio > TARGET or not found["same_bytes"]
        print(
            f"{shown}: scoring uninterrupted {found['uninterrupted_s']:.2f} s, resumed after "
            f"half {found['resumed_s']:.2f} s; ratio {found['wall']:.2f} (wall), "
            f"{found['cpu']:.2f} (CPU) (target <= {TARGET}); same bytes: {found['same_bytes']}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
