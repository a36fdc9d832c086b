"""Score datapoints: each image decoded and encoded once, decoding prefetched in threads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tqdm.auto import tqdm

from .batching import chunks, prefetch_map
from .data import Datapoint, decode_image
from .scorers.base import Scorer

OnScored = Callable[[Datapoint, list[float], "list[str] | None"], None]
Progress = Callable[[int, int, str], None]


def group_by_image(points: Sequence[Datapoint]) -> dict[str, list[Datapoint]]:
    """Datapoints per distinct image, in order of first appearance (across tasks)."""
    groups: dict[str, list[Datapoint]] = {}
    for point in points:
        groups.setdefault(point.image_key, []).append(point)
    return groups


def distinct(items: Sequence[str]) -> list[str]:
    """Items without repeats, first occurrence order."""
    return list(dict.fromkeys(items))


def score_datapoints(
    scorer: Scorer,
    points: Sequence[Datapoint],
    on_scored: OnScored,
    images_per_batch: int = 32,
    progress: Progress | None = None,
) -> None:
    """Score every caption of every datapoint; ``on_scored(point, scores, answers)`` each."""
    groups = group_by_image(points)
    keys = list(groups)

    def prepare(key: str) -> Any:
        return scorer.prepare_image(decode_image(groups[key][0])) if scorer.needs_images else None

    total, done = len(points), 0
    desc = f"scoring ({scorer.kind})"
    bar = tqdm(total=total, desc=desc, unit="datapoint")
    try:
        batches = list(chunks(keys, images_per_batch))
        for batch_keys, prepared in zip(batches, prefetch_map(prepare, batches), strict=True):
            sentences = [distinct([c for p in groups[k] for c in p.captions]) for k in batch_keys]
            scores = scorer.score(prepared, sentences)
            answers = scorer.answers()
            for i, key in enumerate(batch_keys):
                lookup = dict(zip(sentences[i], scores[i], strict=True))
                for point in groups[key]:
                    point_answers = None
                    if answers is not None:
                        point_answers = [answers[(i, c)] for c in point.captions]
                    on_scored(point, [lookup[c] for c in point.captions], point_answers)
                    done += 1
                    bar.update(1)
                if progress is not None:
                    progress(done, total, desc)
    finally:
        bar.close()
