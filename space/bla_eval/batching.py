"""Batching helpers: out-of-memory halving; values cached in the batches of an uninterrupted run;
prefetching that overlaps decoding with the model."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K")

logger = logging.getLogger(__name__)


def is_out_of_memory(err: BaseException) -> bool:
    """True for a CUDA (or other accelerator) out-of-memory error."""
    if isinstance(err, torch.OutOfMemoryError):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def map_batches(
    fn: Callable[[Sequence[T]], Sequence[R]], items: Sequence[T], batch_size: int
) -> list[R]:
    """``fn`` over ``items`` in batches, concatenated; out of memory halves the batch and retries.

    The smaller batch size is kept for the rest of ``items``. Raises the error once a batch of one
    item still does not fit.
    """
    if batch_size < 1:
        raise ValueError(f"batch size must be >= 1, got {batch_size}")
    out: list[R] = []
    start = 0
    while start < len(items):
        chunk = items[start : start + batch_size]
        try:
            results = fn(chunk)
        except Exception as err:
            if not is_out_of_memory(err) or batch_size == 1:
                raise
            batch_size = max(1, batch_size // 2)
            logger.warning("out of memory: retrying with batch size %d", batch_size)
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            continue
        if len(results) != len(chunk):
            raise RuntimeError(
                f"batch function returned {len(results)} results for {len(chunk)} items"
            )
        out.extend(results)
        start += len(chunk)
    return out


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class BatchedCache(Generic[K, R]):
    """Values of keys (a model's sentence features, log-probabilities) computed ``batch_size``
    keys at a time and kept, in the batches an uninterrupted run forms.

    :meth:`plan` puts the keys not seen before into new batches (sorted by ``order``) without
    computing them; :meth:`get` plans its keys, then computes each planned batch that holds one of
    them, whole. A padded batch's values depend on its keys alone, so a resumed run that plans the
    batches of its kept work (``Scorer.skip``) and computes only those its pending items ask for
    gives every key the bytes of a run that computed them all, at the cost of the missing work.
    """

    def __init__(
        self,
        compute: Callable[[Sequence[K]], Sequence[R]],
        batch_size: int,
        order: Callable[[K], Any] | None = None,
    ) -> None:
        self.compute = compute
        self.batch_size = batch_size
        self.order = order
        self.values: dict[K, R] = {}
        self.planned: dict[K, list[K]] = {}
        """Each planned key's batch, until the batch is computed."""

    def __contains__(self, key: object) -> bool:
        return key in self.values or key in self.planned

    def plan(self, keys: Iterable[K]) -> None:
        """Put the keys not seen before into batches, as :meth:`get` would compute them."""
        new = sorted({k for k in keys if k not in self}, key=self.order)  # type: ignore[arg-type]
        for batch in chunks(new, self.batch_size):
            for key in batch:
                self.planned[key] = list(batch)

    def seed(self, known: Mapping[K, R]) -> None:
        """Values known already (computed in these batches by the run a resume continues, and
        kept with it): they are never computed again."""
        for key, value in known.items():
            self.values[key] = value
            self.planned.pop(key, None)

    def get(self, keys: Sequence[K]) -> list[R]:
        """The value of each key, computing the planned batches that hold them."""
        self.plan(keys)
        for key in keys:
            batch = self.planned.get(key)
            if batch is not None:
                found = map_batches(self.compute, batch, self.batch_size)
                self.values.update(zip(batch, found, strict=True))
                for done in batch:
                    self.planned.pop(done, None)
        return [self.values[k] for k in keys]


PREFETCH_THREADS = "bla-prefetch"
"""The name prefix of the prefetching threads."""


def prefetch_map(
    fn: Callable[[T], R], batches: Iterable[Sequence[T]], workers: int | None = None, ahead: int = 2
) -> Iterator[list[R]]:
    """Yield ``[fn(x) for x in batch]`` per batch, computing the next ``ahead`` batches in threads.

    Image decoding and resizing release the GIL, so they run while the model works. Close the
    generator when it is left unfinished (``contextlib.closing``): it then cancels what is queued
    and returns without waiting for its threads. It never waits for them when closed unfinished,
    since a generator left to the garbage collector is closed in whichever thread collects it,
    which may hold ``threading``'s own locks (a join there would wait forever).
    """
    workers = workers or min(4, os.cpu_count() or 1)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=PREFETCH_THREADS)
    finished = False
    try:
        pending: list[list[Any]] = []
        for batch in batches:
            pending.append([pool.submit(fn, x) for x in batch])
            if len(pending) > ahead:
                yield [f.result() for f in pending.pop(0)]
        while pending:
            yield [f.result() for f in pending.pop(0)]
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=not finished)
