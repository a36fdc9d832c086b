"""Every BLA formula, in plain NumPy: ranking view, binary view, pairwise preferences, CIs.

Inputs are one list per datapoint (any number of sentences, at least one true and one false).
Datapoints of equal length are stacked into 2-D arrays, so the usual case (four sentences each)
is computed without Python loops. All results are plain Python floats/ints (JSON-serialisable).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .tasks import TASKS

MODES = ("ranking", "binary")
RANKING_METRICS = ("sentence_accuracy", "set_accuracy", "set_error")
BINARY_METRICS = (
    "accuracy",
    "precision_true",
    "precision_false",
    "recall_true",
    "recall_false",
    "all_same_rate",
)
MEAN = "mean"
"""The mode of per-item values of any benchmark (``{metric: array (n,)}``): each metric is the
mean of its values. Resampling, rank sets and paired tests take it like the two views; it has no
:func:`compute` (the values come from the benchmark, not from scores)."""
TOP_K = "top_k"
"""``threshold`` value that turns scores into labels by ranking (:func:`top_k_labels`)."""

THESIS_PAIRS: dict[str, list[tuple[str, str]]] = {
    task.config: list(task.pairs) for task in TASKS.values()
}
"""The ordered caption-type pairs (X, Y) of the thesis' pairwise tables (§7.1), per config
(``Task.pairs`` of the registry; pairwise tables read the registry itself, so tasks registered
later count too)."""

Block = tuple[np.ndarray, np.ndarray]
"""(datapoint indices, values stacked to shape (len(indices), sentences)) for one length."""


# ----------------------------------------------------------------------------- input handling


def _rows(values: Any, name: str) -> tuple[np.ndarray, list[Block]]:
    """Per-datapoint lengths and the blocks of equal-length datapoints of ``values``.

    Values keep their own dtype (nothing is cast here), so the callers can refuse strings,
    ``None`` or fractions by what they are, before anything turns them into numbers.
    """
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list with one list per datapoint")
    if len(values) == 0:
        raise ValueError(f"{name} is empty: there must be at least one datapoint")
    array = _stack(values)
    if array is not None and array.ndim == 2:
        return np.full(len(array), array.shape[1]), [(np.arange(len(array)), array)]
    lengths = np.empty(len(values), dtype=np.int64)
    for i, row in enumerate(values):
        if isinstance(row, (str, bytes, dict)) or not hasattr(row, "__len__"):
            raise ValueError(
                f"datapoint {i}: {name} must hold a list per datapoint, got {type(row).__name__}"
            )
        lengths[i] = len(row)
    blocks = []
    for length in np.unique(lengths):
        index = np.flatnonzero(lengths == length)
        stacked = _stack([values[i] for i in index])
        if stacked is None or stacked.ndim != 2:
            i = next(i for i in index if not _is_flat(values[i]))
            raise ValueError(f"datapoint {i}: {name} must be a flat list of values")
        blocks.append((index, stacked.reshape(len(index), int(length))))
    return lengths, blocks


def _stack(values: Any) -> np.ndarray | None:
    """``values`` as one array of their own dtype, or None when they do not stack."""
    try:
        array = np.asarray(values)
    except (ValueError, TypeError):
        return None
    if array.dtype == object and array.ndim == 2 and any(_is_sequence(v) for v in array.ravel()):
        return None  # rows of lists that happen to stack: not flat
    return array


def _is_sequence(value: Any) -> bool:
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes))


def _is_flat(row: Any) -> bool:
    """Whether ``row`` is a flat list (no element is itself a list)."""
    return _is_sequence(row) and not any(_is_sequence(v) for v in row)


def _first(bad: np.ndarray, index: np.ndarray) -> int | None:
    """Smallest datapoint index among the rows flagged in ``bad`` (None when none is)."""
    return int(index[bad].min()) if bad.any() else None


def _raise_first(problems: list[tuple[int, str]]) -> None:
    if problems:
        i, message = min(problems)
        raise ValueError(f"datapoint {i}: {message}")


def _is_number(value: Any) -> bool:
    """A real number (bool, int, float, or a NumPy one), not a string, None or a complex."""
    return isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))


def _numeric(values: Any, index: np.ndarray, array: np.ndarray, name: str, what: str):
    """(datapoint, message) for the first row of a block that holds a value that is not a number,
    or None when the whole block is numeric."""
    if array.dtype.kind in "biuf":
        return None
    for i in index:
        bad = next((v for v in values[i] if not _is_number(v)), None)
        if bad is not None or not all(_is_number(v) for v in values[i]):
            return int(i), f"{name} must be {what}, got {bad!r}"
    return None


def _scores(values: Any, name: str) -> tuple[np.ndarray, list[Block]]:
    """Validated score rows: real numbers (not strings), all finite; as float arrays."""
    lengths, raw = _rows(values, name)
    problems, blocks = [], []
    for index, array in raw:
        problem = _numeric(values, index, array, name, "numbers")
        if problem is not None:
            problems.append(problem)
            continue
        array = array.astype(float)
        i = _first(~np.isfinite(array).all(axis=1), index)
        if i is not None:
            bad = [v for v in np.asarray(values[i], dtype=float) if not np.isfinite(v)][0]
            problems.append((i, f"{name} must be finite numbers, got {bad}"))
        blocks.append((index, array))
    _raise_first(problems)
    return lengths, blocks


def _binary(values: Any, name: str) -> tuple[np.ndarray, list[Block]]:
    """Validated 0/1 rows (numbers equal to 0 or 1, never strings or fractions), as booleans."""
    lengths, blocks = _rows(values, name)
    problems, out = [], []
    for index, array in blocks:
        problem = _numeric(values, index, array, name, "0/1 numbers")
        if problem is not None:
            problems.append(problem)
            continue
        bad = ~((array == 0) | (array == 1)).all(axis=1)
        i = _first(bad, index)
        if i is not None:
            row = array[np.flatnonzero(index == i)[0]]
            value = row[(row != 0) & (row != 1)][0]
            problems.append((i, f"{name} must be 0 or 1, got {value.item()!r}"))
        out.append((index, array == 1))
    _raise_first(problems)
    return lengths, out


def _same_shape(lengths_a: np.ndarray, lengths_b: np.ndarray, a: str, b: str) -> None:
    if len(lengths_a) != len(lengths_b):
        raise ValueError(f"{a} has {len(lengths_a)} datapoints but {b} has {len(lengths_b)}")
    differ = np.flatnonzero(lengths_a != lengths_b)
    if len(differ):
        i = int(differ[0])
        raise ValueError(
            f"datapoint {i}: {a} has {lengths_a[i]} sentences but {b} has {lengths_b[i]}"
        )


def _labelled(values: Any, labels: Any, name: str, *, binary: bool = False) -> list[Block]:
    """Validate predictions against references; blocks of (index, values, labels) stacked."""
    lengths_v, blocks_v = _binary(values, name) if binary else _scores(values, name)
    lengths_y, blocks_y = _binary(labels, "references")
    _same_shape(lengths_v, lengths_y, name, "references")
    empty = np.flatnonzero(lengths_y == 0)
    if len(empty):
        raise ValueError(f"datapoint {empty[0]}: no sentences (needs a true and a false one)")
    problems = []
    for index, y in blocks_y:
        i = _first(~y.any(axis=1), index)
        if i is not None:
            problems.append((i, "references have no true sentence (label 1)"))
        i = _first(y.all(axis=1), index)
        if i is not None:
            problems.append((i, "references have no false sentence (label 0)"))
    _raise_first(problems)
    return [(iv, v, y) for (iv, v), (_, y) in zip(blocks_v, blocks_y, strict=True)]


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")


# ----------------------------------------------------------------------------- per datapoint


def _ranking_stats(scores: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per-datapoint counts of the ranking view for one block (shape (n, sentences)).

    A sentence is correctly placed when it is true and among the top k (k = number of true
    sentences) or false and outside the top k. Ties are broken uniformly at random and the
    expected count is used: a sentence with ``a`` strictly higher scores and ``e`` equal scores
    (itself included) is in the top k with probability ``clip(k - a, 0, e) / e``.
    """
    k = labels.sum(axis=1)
    m = labels.shape[1] - k
    higher = np.zeros(scores.shape, dtype=np.int64)
    equal = np.zeros(scores.shape, dtype=np.int64)
    for column in scores.T:  # a loop over sentence positions is faster than an (n, L, L) array
        higher += column[:, None] > scores
        equal += column[:, None] == scores
    in_top = np.clip(k[:, None] - higher, 0, equal) / equal
    true_in_top = (in_top * labels).sum(axis=1)
    true_min = np.where(labels, scores, np.inf).min(axis=1)
    true_max = np.where(labels, scores, -np.inf).max(axis=1)
    false_min = np.where(labels, np.inf, scores).min(axis=1)
    false_max = np.where(labels, -np.inf, scores).max(axis=1)
    return {
        "correct": 2 * true_in_top + m - k,
        "sentences": np.full(len(scores), labels.shape[1], dtype=float),
        "set_accuracy": (true_min > false_max).astype(float),
        "set_error": (false_min > true_max).astype(float),
    }


def _binary_stats(predicted: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per-datapoint confusion counts and the all-same flag for one block."""
    return {
        "tp": (predicted & labels).sum(axis=1).astype(float),
        "fp": (predicted & ~labels).sum(axis=1).astype(float),
        "tn": (~predicted & ~labels).sum(axis=1).astype(float),
        "fn": (~predicted & labels).sum(axis=1).astype(float),
        "all_same": (predicted.all(axis=1) | ~predicted.any(axis=1)).astype(float),
    }


def _scatter(per_block: list[tuple[np.ndarray, dict[str, np.ndarray]]], n: int):
    """Per-datapoint stats of all blocks, back in datapoint order: {stat: array (n,)}."""
    out: dict[str, np.ndarray] = {}
    for index, stats in per_block:
        for key, values in stats.items():
            out.setdefault(key, np.empty(n))[index] = values
    return out


def _aggregate(mode: str, stats: dict[str, np.ndarray]) -> dict[str, float]:
    """The view's metrics from per-datapoint stats (any subset or resample of datapoints)."""
    rows = _aggregate_rows(mode, {key: np.asarray(value)[None] for key, value in stats.items()})
    return {key: float(values[0]) for key, values in rows.items()}


def _ratios(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator element-wise, 0.0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator != 0)


def _aggregate_rows(mode: str, stats: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """:func:`_aggregate` of each row of per-datapoint stats shaped (rows, datapoints)."""
    if mode == MEAN:
        return {key: np.asarray(values, float).mean(-1) for key, values in stats.items()}
    if mode == "ranking":
        correct = stats["correct"].sum(-1).astype(float)
        return {
            "sentence_accuracy": _ratios(correct, stats["sentences"].sum(-1).astype(float)),
            "set_accuracy": stats["set_accuracy"].mean(-1),
            "set_error": stats["set_error"].mean(-1),
        }
    tp, fp, tn, fn = (stats[key].sum(-1).astype(float) for key in ("tp", "fp", "tn", "fn"))
    return {
        "accuracy": _ratios(tp + tn, tp + fp + tn + fn),
        "precision_true": _ratios(tp, tp + fp),
        "precision_false": _ratios(tn, tn + fn),
        "recall_true": _ratios(tp, tp + fn),
        "recall_false": _ratios(tn, tn + fp),
        "all_same_rate": stats["all_same"].mean(-1),
    }


def _stats(mode: str, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int):
    function = _ranking_stats if mode == "ranking" else _binary_stats
    return _scatter([(index, function(v, y)) for index, v, y in blocks], n)


# ----------------------------------------------------------------------------- public API


def ranking_metrics(scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]) -> dict:
    """Ranking view: ``sentence_accuracy``, ``set_accuracy``, ``set_error`` and ``n``.

    ``set_accuracy``: every true sentence scores strictly above every false one. ``set_error``:
    every false sentence strictly above every true one. ``sentence_accuracy``: share of sentences
    correctly placed (true in the top k, false outside; k = number of true sentences), with tied
    scores sharing their positions evenly (expected value over random tie-breaking).
    """
    blocks = _labelled(scores, labels, "predictions")
    n = len(labels)
    return {**_aggregate("ranking", _stats("ranking", blocks, n)), "n": n}


def binary_metrics(
    predicted_labels: Sequence[Sequence[int]], labels: Sequence[Sequence[int]]
) -> dict:
    """Binary view over all sentences; a zero denominator gives 0.0.

    ``accuracy``; ``precision_true`` = TP/(TP+FP); ``precision_false`` = TN/(TN+FN);
    ``recall_true`` = TP/(TP+FN); ``recall_false`` = TN/(TN+FP); ``all_same_rate`` = share of
    datapoints whose sentences all got the same label; ``n`` = number of datapoints.
    """
    blocks = _labelled(predicted_labels, labels, "predictions", binary=True)
    n = len(labels)
    return {**_aggregate("binary", _stats("binary", blocks, n)), "n": n}


def threshold_labels(scores: Sequence[Sequence[float]], threshold: float) -> list[list[int]]:
    """Hard labels: 1 where score >= threshold, else 0 (one list per datapoint)."""
    threshold = _threshold_value(threshold)
    lengths, blocks = _scores(scores, "predictions")
    return _unstack([(index, array >= threshold) for index, array in blocks], len(lengths))


def top_k_labels(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]
) -> list[list[int]]:
    """Hard labels by rank: the k highest-scored sentences get 1 (k = number of true sentences).

    Ties are broken against true sentences: among equal scores, false sentences go first.
    """
    blocks = _labelled(scores, labels, "predictions")
    return _unstack([(index, _top_k(s, y)) for index, s, y in blocks], len(labels))


def _top_k(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    order = np.lexsort((labels, -scores), axis=-1)  # score descending, then false before true
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(scores.shape[1])[None, :], axis=1)
    return ranks < labels.sum(axis=1, keepdims=True)


def _unstack(blocks: list[tuple[np.ndarray, np.ndarray]], n: int) -> list[list[int]]:
    out: list[list[int]] = [[] for _ in range(n)]
    for index, array in blocks:
        for i, row in zip(index.tolist(), array.astype(int).tolist(), strict=True):
            out[i] = row
    return out


def _threshold_value(threshold: Any) -> float:
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a number or {TOP_K!r}, got {threshold!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    return value


# ----------------------------------------------------------------------------- pairwise


def _type_rows(caption_types: Any, lengths: np.ndarray) -> list[Block]:
    """Caption-type rows as string blocks aligned with ``lengths`` (a flat list is broadcast)."""
    if isinstance(caption_types, (str, bytes)) or not hasattr(caption_types, "__len__"):
        raise ValueError("caption_types must be a list of names, or one such list per datapoint")
    if len(caption_types) and isinstance(caption_types[0], str):
        differ = np.flatnonzero(lengths != len(caption_types))
        if len(differ):
            i = int(differ[0])
            raise ValueError(
                f"datapoint {i}: caption_types has {len(caption_types)} names "
                f"but predictions has {lengths[i]} sentences"
            )
        row = np.asarray(caption_types, dtype=str)
        return [(np.arange(len(lengths)), np.broadcast_to(row, (len(lengths), len(row))))]
    if len(caption_types) != len(lengths):
        raise ValueError(
            f"caption_types has {len(caption_types)} datapoints but predictions has {len(lengths)}"
        )
    type_lengths, blocks = _rows(caption_types, "caption_types")
    _same_shape(lengths, type_lengths, "predictions", "caption_types")
    return [(index, array.astype(str)) for index, array in blocks]


def _pairs(types: list[str], true_types: set[str]) -> list[tuple[str, str]]:
    """The thesis pairs when ``types`` belong to a BLA config, else every pair of types present
    (true types before false ones, then in order of first appearance)."""
    for task in TASKS.values():
        if set(types) <= {name for pair in task.pairs for name in pair}:
            return list(task.pairs)
    ordered = sorted(types, key=lambda name: name not in true_types)
    return [(x, y) for i, x in enumerate(ordered) for y in ordered[i + 1 :]]


Scored = list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]
"""Blocks of (datapoint indices, scores, labels or None), as ``_labelled`` returns them."""


def _type_positions(type_blocks: list[Block], n: int) -> dict[str, np.ndarray]:
    """{type name: its sentence position in each datapoint, -1 where absent}, names in order of
    first appearance (datapoint, then position)."""
    names: list[str] = []
    for _, types in type_blocks:
        present = types[0] if (types == types[:1]).all() else np.unique(types)
        names += [str(name) for name in present if str(name) not in names]
    positions = {}
    for name in names:
        column = np.full(n, -1)
        for index, types in type_blocks:
            mask = types == name
            count = mask.sum(axis=1)
            i = _first(count > 1, index)
            if i is not None:
                raise ValueError(f"datapoint {i}: caption type {name!r} occurs {count.max()} times")
            column[index] = np.where(count == 1, mask.argmax(axis=1), -1)
        positions[name] = column

    def first_seen(name: str) -> tuple[int, int]:
        i = int(np.argmax(positions[name] >= 0))
        return i, int(positions[name][i])

    return {name: positions[name] for name in sorted(names, key=first_seen)}


def _pair_outcomes(scored: Scored, caption_types: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per pair "X>Y": (datapoint has both types, X scored strictly above Y), arrays (n,)."""
    n = sum(len(index) for index, _, _ in scored)
    width = max(values.shape[1] for _, values, _ in scored)
    lengths = np.empty(n, dtype=np.int64)
    values = np.full((n, width), np.nan)
    labels = np.zeros((n, width), dtype=bool)
    for index, block, block_labels in scored:
        lengths[index] = block.shape[1]
        values[index, : block.shape[1]] = block
        if block_labels is not None:
            labels[index, : block.shape[1]] = block_labels
    positions = _type_positions(_type_rows(caption_types, lengths), n)
    true_types = set()
    for name, column in positions.items():
        i = int(np.argmax(column >= 0))
        if labels[i, column[i]]:
            true_types.add(name)
    rows = np.arange(n)
    outcomes = {}
    for x, y in _pairs(list(positions), true_types):
        if x not in positions or y not in positions:
            continue
        both = (positions[x] >= 0) & (positions[y] >= 0)
        if both.any():
            above = values[rows, positions[x]] > values[rows, positions[y]]
            outcomes[f"{x}>{y}"] = (both, above & both)
    return outcomes


def _pairwise_share(outcomes: dict[str, tuple[np.ndarray, np.ndarray]], subset=None) -> dict:
    shares = {}
    for key, (both, above) in outcomes.items():
        if subset is not None:
            both, above = both[subset], above[subset]
        if both.any():
            shares[key] = float(above.sum() / both.sum())
    return shares


def pairwise_preferences(
    scores: Sequence[Sequence[float]],
    caption_types: Sequence[str] | Sequence[Sequence[str]],
    labels: Sequence[Sequence[int]] | None = None,
) -> dict[str, float]:
    """Share of datapoints where caption type X scores strictly above type Y: {"X>Y": share}.

    ``caption_types``: one list of names per datapoint, or one list for all datapoints. Pairs:
    the thesis pairs for BLA types (AP: TA>FA, TP>FP, TP>FA, TA>FP, TA>TP, FA>FP; CO/RC: TP1>FP1,
    TP2>FP2, TP2>FP1, TP1>FP2, TP1>TP2, FP1>FP2); for other names every pair of types, true types
    (by ``labels``, when given) before false ones, else in order of first appearance. Each share is
    over the datapoints that have both types; a pair no datapoint has is left out.
    """
    if labels is None:
        scored: Scored = [(index, v, None) for index, v in _scores(scores, "predictions")[1]]
    else:
        scored = _labelled(scores, labels, "predictions")
    return _pairwise_share(_pair_outcomes(scored, caption_types))


# ----------------------------------------------------------------------------- compute


def _predictions(predictions: Any, references: Any, mode: str, threshold: Any):
    """(blocks of the view: (index, values, labels); the same with the raw predictions as
    floats). Binary view: hard labels as given, thresholded scores (score >= threshold is
    true), or the top k by rank (``threshold="top_k"``)."""
    if mode == "ranking" and threshold is not None:
        raise ValueError("threshold only applies to mode='binary'")
    if mode == "binary" and threshold is None:
        blocks = _labelled(predictions, references, "predictions", binary=True)
        return blocks, [(index, v.astype(float), y) for index, v, y in blocks]
    scored = _labelled(predictions, references, "predictions")
    if mode == "ranking":
        return scored, scored
    if isinstance(threshold, str) and threshold == TOP_K:
        return [(index, _top_k(s, y), y) for index, s, y in scored], scored
    value = _threshold_value(threshold)
    return [(index, s >= value, y) for index, s, y in scored], scored


MAX_RESAMPLES = 100_000
"""The most bootstrap resamples one call may ask for. The resampled metrics are kept in one
float64 array per metric and run (8 bytes per resample, allocated before the first draw: at most
0.8 MB per metric), the draws are made a block at a time (:data:`RESAMPLE_CELLS`), so memory
does not grow while resampling."""


def _check_bootstrap(resamples: Any, low: int = 0, name: str = "bootstrap") -> int:
    whole = not isinstance(resamples, bool) and isinstance(resamples, (int, np.integer))
    if not whole or not low <= resamples <= MAX_RESAMPLES:
        what = "a non-negative" if low == 0 else "a positive"
        raise ValueError(
            f"{name} must be {what} integer of at most {MAX_RESAMPLES}, got {resamples!r}"
        )
    return int(resamples)


RESAMPLE_CELLS = 250_000
"""Datapoint draws made at once (resamples x datapoints): the working memory of a bootstrap."""


def resampled(
    mode: str,
    stats_sets: Sequence[dict[str, np.ndarray]],
    resamples: int,
    seed: int,
    clusters: Sequence[Any] | None = None,
) -> list[dict[str, np.ndarray]]:
    """Each metric of ``mode`` on ``resamples`` bootstrap resamples of the datapoints, for each
    set of per-datapoint statistics (the same draws for every set, so pairs stay paired):
    per set {metric: array (resamples,)}, filled a block of resamples at a time. With
    ``clusters`` (one label per datapoint) whole clusters are drawn instead:
    :func:`_cluster_resampled`."""
    resamples = _check_bootstrap(resamples)
    if clusters is not None:
        return _cluster_resampled(mode, stats_sets, resamples, seed, clusters)
    rng = np.random.default_rng(seed)
    n = len(next(iter(stats_sets[0].values())))
    keys = list(_aggregate(mode, stats_sets[0]))
    out = [{key: np.empty(resamples) for key in keys} for _ in stats_sets]
    block = max(1, RESAMPLE_CELLS // max(n, 1))
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        sample = rng.integers(0, n, (stop - start, n))  # the draws of one resample per row
        for stats, arrays in zip(stats_sets, out, strict=True):
            rows = _aggregate_rows(mode, {k: np.asarray(v)[sample] for k, v in stats.items()})
            for key in keys:
                arrays[key][start:stop] = rows[key]
    return out


def _cluster_resampled(
    mode: str,
    stats_sets: Sequence[dict[str, np.ndarray]],
    resamples: int,
    seed: int,
    clusters: Sequence[Any],
) -> list[dict[str, np.ndarray]]:
    """:func:`resampled` drawing clusters: each resample draws as many clusters as there are,
    with replacement, and takes every datapoint of each drawn cluster (as often as the cluster
    was drawn). Datapoints sharing a cluster (AP's caption sets of one predicate) then move
    together, as they would on another sample of clusters."""
    _, index = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    n = len(next(iter(stats_sets[0].values())))
    if len(index) != n:
        raise ValueError(f"{len(index)} cluster labels for {n} datapoints")
    count = int(index.max()) + 1 if n else 0
    rng = np.random.default_rng(seed)
    keys = list(_aggregate(mode, stats_sets[0]))
    out = [{key: np.empty(resamples) for key in keys} for _ in stats_sets]
    block = max(1, RESAMPLE_CELLS // max(n, 1))
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        drawn = rng.integers(0, count, (stop - start, count))
        times = np.stack([np.bincount(row, minlength=count) for row in drawn])
        weights = times[:, index].astype(float)  # (rows, n): how often each datapoint is taken
        weights *= n / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)  # means stay means
        for stats, arrays in zip(stats_sets, out, strict=True):
            rows = _aggregate_rows(
                mode, {k: np.asarray(v, float)[None, :] * weights for k, v in stats.items()}
            )
            for key in keys:
                arrays[key][start:stop] = rows[key]
    return out


SHARES = {"ranking": ("set_accuracy", "set_error"), "binary": ("all_same_rate",)}
"""Per view, the metrics that are a share of datapoints (one 0/1 outcome per datapoint): their
95% interval is :func:`share_interval`'s, computed from the count and n alone, so every table
that shows the number (``results.json``, the reports, the leaderboard) gives the same one."""
INTERVAL_METHOD = (
    "Clopper-Pearson (exact binomial) for shares of datapoints (set accuracy, set error, "
    "all-same rate); percentile bootstrap over datapoints for the others"
)
"""How :func:`compute`'s ``ci`` (and ``results.json``'s ``confidence_intervals``) is made."""


def _bootstrap(mode: str, stats: dict[str, np.ndarray], resamples: int, seed: int) -> dict:
    """95% interval per metric: :func:`share_interval` for the shares of :data:`SHARES`, the
    percentile bootstrap (resampling datapoints) for the others."""
    draws = resampled(mode, [stats], resamples, seed)[0]
    if not resamples:
        return {}
    observed = _aggregate(mode, stats)
    n = len(next(iter(stats.values())))
    return {
        key: (
            share_interval(round(observed[key] * n), n)
            if key in SHARES.get(mode, ())
            else [float(v) for v in np.percentile(values, [2.5, 97.5])]
        )
        for key, values in draws.items()
    }


def compute(
    predictions: Sequence[Sequence[float]],
    references: Sequence[Sequence[int]],
    mode: str = "ranking",
    threshold: float | str | None = None,
    caption_types: Sequence[str] | Sequence[Sequence[str]] | None = None,
    groups: Sequence[Any] | None = None,
    bootstrap: int = 0,
    seed: int = 0,
) -> dict:
    """All metrics of one view, as returned by the ``bla`` evaluate module.

    ``mode="ranking"``: predictions are scores (higher = more likely true). ``mode="binary"``:
    predictions are 0/1 labels, or scores turned into labels with ``threshold`` (a number:
    score >= threshold is true; ``"top_k"``: the k best-ranked sentences are true). Extra keys:
    ``pairwise`` (with ``caption_types``, on the raw predictions), ``per_group`` (with
    ``groups``, one label per datapoint; keys are ``str(label)``, sorted) and ``ci`` (with
    ``bootstrap`` > 0 resamples: {metric: [low, high]}, 95%: :func:`share_interval` for the
    shares of datapoints of :data:`SHARES`, else the percentile bootstrap interval, seeded).
    """
    _check_mode(mode)
    _check_bootstrap(bootstrap)
    blocks, scored = _predictions(predictions, references, mode, threshold)
    n = len(references)
    stats = _stats(mode, blocks, n)
    result: dict[str, Any] = {**_aggregate(mode, stats), "n": n}
    outcomes = None
    if caption_types is not None:
        outcomes = _pair_outcomes(scored, caption_types)
        result["pairwise"] = _pairwise_share(outcomes)
    if groups is not None:
        result["per_group"] = _per_group(mode, stats, outcomes, groups, n)
    if bootstrap:
        result["ci"] = _bootstrap(mode, stats, bootstrap, seed)
    return result


def check_inputs(
    predictions: Any,
    references: Any,
    mode: str = "ranking",
    threshold: Any = None,
    caption_types: Any = None,
    groups: Any = None,
    bootstrap: Any = 0,
    seed: Any = 0,
) -> None:
    """Raise the ValueError :func:`compute` would raise for these inputs (None: they are fine).

    The ``bla`` evaluate module calls this on the raw inputs before ``evaluate`` casts them to
    its features, so both entry points accept and refuse exactly the same inputs.
    """
    _check_bootstrap(bootstrap)
    compute(predictions, references, mode, threshold, caption_types, groups, 0, seed)


def _per_group(mode: str, stats: dict, outcomes: dict | None, groups: Any, n: int) -> dict:
    """{str(group): metrics of the datapoints of that group}, groups sorted by name."""
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ValueError("groups must be a list with one label per datapoint")
    if len(groups) != n:
        raise ValueError(f"groups has {len(groups)} labels but there are {n} datapoints")
    names = np.asarray([str(g) for g in groups])
    out = {}
    for name in sorted(set(names.tolist())):
        subset = names == name
        metrics: dict[str, Any] = _aggregate(mode, {k: v[subset] for k, v in stats.items()})
        metrics["n"] = int(subset.sum())
        if outcomes is not None:
            metrics["pairwise"] = _pairwise_share(outcomes, subset)
        out[name] = metrics
    return out


def rank_positions(scores: Sequence[float], labels: Sequence[int]) -> list[int]:
    """1-based rank of each sentence of one datapoint, highest score first; tied sentences are
    ordered false before true (the tie rule of :func:`top_k_labels`: ties never favour truth)."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), int(labels[i])))
    ranks = [0] * len(scores)
    for position, i in enumerate(order, 1):
        ranks[i] = position
    return ranks


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> list[float]:
    """Wilson's score interval of a proportion (statsmodels' ``proportion_confint(...,
    method="wilson")``): it stays inside [0, 1] and keeps its width at 0 or n successes, where
    the percentile bootstrap collapses to a point. [NaN, NaN] without datapoints."""
    if n < 1:
        return [float("nan"), float("nan")]
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    centre = (successes + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(successes * (n - successes) / n + z * z / 4)
    # At 0 or n successes the bound is exactly 0 or 1 (the formula misses it by a rounding error).
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return [float(low), float(high)]


def share_interval(successes: int, n: int, confidence: float = 0.95) -> list[float]:
    """The Clopper-Pearson (exact binomial) interval of a share of ``successes`` in ``n``
    (statsmodels' ``proportion_confint(..., method="beta")``): the parameters p for which the
    observed count is not in either ``(1 - confidence) / 2`` tail of Binomial(n, p). It never
    covers less than ``confidence`` at any true rate, rare ones included (Wilson's interval
    dips to 85% at n = 30: ``python -m bla_eval.simulations.coverage``). [NaN, NaN] without
    datapoints. Written with numpy (bisection on the binomial tails) so the metric needs no
    scipy."""
    if n < 1:
        return [float("nan"), float("nan")]
    k = int(round(successes))
    if not 0 <= k <= n:
        raise ValueError(f"{successes} successes of {n}")
    from math import lgamma

    tail = (1 - confidence) / 2
    counts = np.arange(n + 1)
    log_choose = lgamma(n + 1) - np.array([lgamma(j + 1) + lgamma(n - j + 1) for j in counts])

    def at_least(count: int, p: float) -> float:
        """P(X >= count) for X ~ Binomial(n, p), 0 < p < 1 (log-space terms)."""
        logs = log_choose[count:] + counts[count:] * np.log(p) + (n - counts[count:]) * np.log1p(-p)
        top = logs.max()
        return float(min(1.0, np.exp(top) * np.exp(logs - top).sum()))

    low = 0.0 if k == 0 else _solve(lambda p: at_least(k, p), tail)
    high = 1.0 if k == n else _solve(lambda p: at_least(k + 1, p), 1 - tail)
    return [low, high]


def _solve(increasing, target: float) -> float:
    """The p in (0, 1) where the increasing function ``increasing(p)`` reaches ``target``
    (bisection to machine precision)."""
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if increasing(middle) < target:
            low = middle
        else:
            high = middle
    return float((low + high) / 2)


def undefined_ratios(view: dict[str, Any]) -> list[str]:
    """The binary-view ratios of ``view`` (its metrics, as ``results.json`` stores them) whose
    denominator was 0: ``precision_true`` when no sentence was labelled true (recall true 0,
    recall false 1), ``precision_false`` when none was labelled false (recall true 1, recall
    false 0). The formulas give them 0.0 (:func:`binary_metrics`); a report prints
    "undefined". Decided from the stored numbers, so older runs are read the same way."""
    recall_true, recall_false = view.get("recall_true"), view.get("recall_false")
    if recall_true is None or recall_false is None:
        return []
    out = []
    if recall_true == 0 and recall_false == 1:
        out.append("precision_true")
    if recall_true == 1 and recall_false == 0:
        out.append("precision_false")
    return out


def nested_mean_values(values: Sequence[float], *levels: Sequence[Any]) -> np.ndarray:
    """Per item, ``values`` weighted so that their plain mean is a macro average: the mean over
    the groups of ``levels[0]`` (one label per item) of the mean over their groups of
    ``levels[1]`` ... of the mean of the items' values (one level: a per-class macro accuracy;
    VL-CheckList: sources, then annotation files). Paired tests and rank sets take these as any
    per-item values (the :data:`MEAN` mode)."""
    array = np.asarray(values, float)
    weights = np.full(len(array), float(len(array)))
    keys: list[tuple[str, ...]] = [()] * len(array)
    for level in levels:
        labels = [str(label) for label in level]
        if len(labels) != len(array):
            raise ValueError(f"{len(labels)} group labels for {len(array)} items")
        children: dict[tuple[str, ...], set[str]] = {}
        for key, label in zip(keys, labels, strict=True):
            children.setdefault(key, set()).add(label)
        weights /= [len(children[key]) for key in keys]
        keys = [(*key, label) for key, label in zip(keys, labels, strict=True)]
    sizes: dict[tuple[str, ...], int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    return array * weights / [sizes[key] for key in keys]


def is_share(values: Any) -> bool:
    """Whether per-item values are a share of items (every value 0 or 1): their mean's interval
    is :func:`share_interval`'s."""
    array = np.asarray(values, float)
    return bool(array.size) and bool(np.isin(array, (0.0, 1.0)).all())


def no_variation(interval: Sequence[float] | None) -> bool:
    """Whether a bootstrap interval has width 0 (every resample gave the same value): no
    evidence of anything, printed "inconclusive (no variation)", never as an interval. An
    interval of :func:`share_interval` never has width 0."""
    if interval is None or len(interval) != 2:
        return False
    low, high = (float(v) for v in interval)
    return low == low and high == high and abs(high - low) <= 1e-12
