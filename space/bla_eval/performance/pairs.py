"""The (image, sentence) pairs the speed scripts time: images spread over the benchmark, and the
largest difference between two paths' scores of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def spread_pairs(data: str, n_images: int) -> tuple[list[Any], list[Any], list[list[Any]]]:
    """(datapoints, images, queries per image) of every n-th of ``n_images`` images of the BLA
    dataset ``data`` (images of one task and images shared across tasks), each image with the
    distinct sentences of its datapoints."""
    from ..benchmarks.bla import load_bla
    from ..items import decode_image
    from ..queries import Query

    groups: dict[str, list[Any]] = {}
    for item in load_bla(data):
        groups.setdefault(item.images[0].key, []).append(item)
    keys = list(groups)
    step = max(1, len(keys) // max(1, n_images))
    groups = {k: groups[k] for k in keys[::step][:n_images]}
    items = [item for group in groups.values() for item in group]
    images = [decode_image(g[0], g[0].images[0]) for g in groups.values()]
    queries = [
        [Query(s) for s in dict.fromkeys(c for item in g for c in item.captions)]
        for g in groups.values()
    ]
    return items, images, queries


def max_score_difference(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> float:
    """The largest |a - b| over two paths' scores of the same pairs (per image, per sentence)."""
    return max(
        abs(x - y)
        for row_a, row_b in zip(a, b, strict=True)
        for x, y in zip(row_a, row_b, strict=True)
    )
