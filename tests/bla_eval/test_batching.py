"""Engine helpers without models: OOM halving, prefetching, score records, similarities."""

from __future__ import annotations

import threading
import time

import pytest
import torch
from bla_eval.batching import (
    PREFETCH_THREADS,
    BatchedCache,
    chunks,
    is_out_of_memory,
    map_batches,
    prefetch_map,
)
from bla_eval.scorers.base import regroup
from bla_eval.scorers.dual import similarity_scores


class LimitedDevice:
    """A batch function that fails like a GPU when a batch holds more than ``capacity`` items."""

    def __init__(self, capacity: int, error: type[BaseException] = torch.OutOfMemoryError) -> None:
        self.capacity = capacity
        self.error = error
        self.calls: list[int] = []

    def __call__(self, batch):
        self.calls.append(len(batch))
        if len(batch) > self.capacity:
            if self.error is RuntimeError:
                raise RuntimeError("CUDA error: out of memory")
            raise self.error("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [x * x for x in batch]


def test_a_batched_cache_computes_only_the_planned_batches_asked_for():
    """A resume plans the batches of its kept work and computes only those a pending item asks
    for; each key gets the value of the batch an uninterrupted run computes it in."""
    seen: list[list[str]] = []

    def padded(batch):  # each value depends on its whole batch, as a padded forward's does
        seen.append(list(batch))
        return [f"{text}/{max(map(len, batch))}" for text in batch]

    uninterrupted = BatchedCache(padded, 2, order=lambda t: (len(t), t))
    first = uninterrupted.get(["ccc", "a", "bb"])
    second = uninterrupted.get(["dddd", "a", "eeeee"])
    assert seen == [["ccc"], ["a", "bb"], ["dddd", "eeeee"]]
    resumed, seen[:] = BatchedCache(padded, 2, order=lambda t: (len(t), t)), []
    resumed.plan(["ccc", "a", "bb"])  # a kept batch: planned, nothing computed
    assert seen == [] and "bb" in resumed
    assert resumed.get(["dddd", "a", "eeeee"]) == second
    assert seen == [["dddd", "eeeee"], ["a", "bb"]]  # "ccc"'s batch is never computed
    assert resumed.get(["ccc", "a", "bb"]) == first


def test_out_of_memory_halves_the_batch_and_keeps_the_smaller_size():
    device = LimitedDevice(capacity=3)
    assert map_batches(device, list(range(10)), batch_size=16) == [x * x for x in range(10)]
    # 16 -> 8 -> 4 fail on 10 items; then batches of 2 for the rest
    assert device.calls == [10, 8, 4, 2, 2, 2, 2, 2]


def test_out_of_memory_runtime_error_message_is_recognised():
    device = LimitedDevice(capacity=1, error=RuntimeError)
    assert map_batches(device, [1, 2, 3], batch_size=4) == [1, 4, 9]
    assert is_out_of_memory(RuntimeError("CUDA out of memory."))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))


def test_out_of_memory_at_batch_size_one_is_raised():
    with pytest.raises(torch.OutOfMemoryError):
        map_batches(LimitedDevice(capacity=0), [1, 2], batch_size=4)


def test_other_errors_are_not_retried():
    device = LimitedDevice(capacity=1, error=ValueError)
    with pytest.raises(ValueError):
        map_batches(device, [1, 2, 3], batch_size=2)
    assert device.calls == [2]


def test_prefetch_map_keeps_order_and_runs_in_worker_threads():
    threads = set()

    def work(x):
        threads.add(threading.get_ident())
        return x + 1

    batches = list(chunks(list(range(23)), 5))
    out = list(prefetch_map(work, batches, workers=2))
    assert out == [[x + 1 for x in b] for b in batches]
    assert threading.get_ident() not in threads


def test_prefetch_map_closed_unfinished_does_not_wait_for_its_threads():
    """An unfinished generator is closed (by its caller, or by the garbage collector in whatever
    thread collects it) without joining its threads: one still decoding does not hold it, and
    nothing queued behind it runs."""
    release, ran = threading.Event(), []

    def work(x):
        ran.append(x)
        if x == 5:
            release.wait(30)  # a slow decode in flight when the generator is closed
        return x

    batches = list(chunks(list(range(40)), 5))
    prefetched = prefetch_map(work, batches, workers=1, ahead=2)
    assert next(prefetched) == [0, 1, 2, 3, 4]
    closer = threading.Thread(target=prefetched.close)
    closer.start()
    closer.join(5)
    try:
        assert not closer.is_alive(), "closing waited for a prefetching thread"
    finally:
        release.set()
    deadline = time.monotonic() + 10
    while any(t.name.startswith(PREFETCH_THREADS) for t in threading.enumerate()):
        assert time.monotonic() < deadline, "a prefetching thread outlived its generator"
        time.sleep(0.01)
    assert max(ran) < 15  # the queued batches were cancelled


def test_similarities_and_regroup():
    image = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    text = torch.tensor([[0.6, 0.8], [-1.0, 0.0]])
    assert similarity_scores(image, text, "cosine").tolist() == pytest.approx([0.6, -1.0])
    assert similarity_scores(image, text, "clipscore").tolist() == pytest.approx([1.5, 0.0])
    with pytest.raises(ValueError, match="similarity"):
        similarity_scores(image, text, "dot")
    assert regroup([1, 2, 3, 4, 5], [["a", "b"], [], ["c", "d", "e"]]) == [[1, 2], [], [3, 4, 5]]


def test_library_messages_and_warnings_print_above_the_progress_bar(capsys):
    """A transformers log message or a Python warning while items are scored is written on a
    line of its own, not appended to the bar's line."""
    import logging
    import re
    import sys
    import warnings

    from bla_eval.scoring import library_messages_above
    from tqdm.auto import tqdm

    bar = tqdm(total=2, desc="scoring (test)", file=sys.stderr)
    bar.update(1)
    with library_messages_above():
        logging.getLogger("transformers").warning("careful: a library message")
        warnings.warn("an old argument", FutureWarning, stacklevel=1)
    bar.close()
    err = capsys.readouterr().err
    for message in ("careful: a library message", "an old argument"):
        assert re.search(r"(^|[\r\n])[^\r\n|]*" + re.escape(message), err), err
        assert not re.search(r"\|[^\r\n]*" + re.escape(message), err), err
    assert logging.captureWarnings is not None and not logging.getLogger("py.warnings").handlers
