"""Runs across processes: ``torchrun`` / ``accelerate launch`` split the images of a run.

``torchrun --nproc-per-node N -m bla_eval ...`` (or ``accelerate launch --num_processes N -m
bla_eval ...``) starts N copies of the same run. Each process:

- reads its rank and the number of processes from the launcher's environment (``RANK``,
  ``WORLD_SIZE``, ``LOCAL_RANK``) and, on CUDA, takes the GPU ``cuda:LOCAL_RANK``;
- scores its share of the images: the distinct images of the run in order of first appearance,
  dealt out in turn (image ``g`` to process ``g % N``), each item with its first image;
- appends its records to its own part, ``scores.part-R-of-N.jsonl``, so ``--resume`` continues
  each part where it stopped.

When every process is done (a ``gloo`` barrier: it also works where there is no GPU), the main
process merges the parts into one ``scores.jsonl`` in the order a single process writes it,
removes the parts, and writes ``results.json`` from it: the same files as a one-process run (only
timings and the creation time differ). A resumed run first folds parts left by an interrupted run
(of any number of processes) into ``scores.jsonl``, so any later run, with any number of processes,
continues from them. The part files themselves (names, folding, merging) are the run folder's
(``bla_eval.runs.RunFolder``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .batching import chunks
from .cli_common import check_range
from .items import Item

if TYPE_CHECKING:
    from .runs import RunFolder

TIMEOUT_ENV = "BLA_EVAL_DIST_TIMEOUT_S"
"""Seconds a process waits at a barrier for the others (default 24 hours: a long model run)."""
DEFAULT_TIMEOUT_S = 24 * 3600
MAX_TIMEOUT_S = 30 * 24 * 3600
"""The longest wait :data:`TIMEOUT_ENV` may ask for (30 days)."""
MAX_PROCESSES = 1_000_000
"""The largest ``WORLD_SIZE`` taken (far above any launcher's)."""


@dataclass(frozen=True)
class Processes:
    """This process's place in a multi-process run (``world == 1``: a plain run)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Processes:
        """Rank and size from ``torchrun`` / ``accelerate launch`` (``RANK``, ``WORLD_SIZE``,
        ``LOCAL_RANK``); one process when they are not set."""
        env = dict(os.environ if env is None else env)
        world = _env_int(env, "WORLD_SIZE", 1)
        rank = _env_int(env, "RANK", 0)
        local = _env_int(env, "LOCAL_RANK", rank)
        if world < 1 or not 0 <= rank < world:
            raise ValueError(f"bad process group: RANK={rank}, WORLD_SIZE={world}")
        timeout = (
            _env_seconds(env, TIMEOUT_ENV, DEFAULT_TIMEOUT_S) if world > 1 else DEFAULT_TIMEOUT_S
        )
        return cls(rank, world, local, timeout)

    @property
    def distributed(self) -> bool:
        return self.world > 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def device(self, device: str) -> str:
        """``auto`` / ``cuda`` -> this process's GPU (``cuda:LOCAL_RANK``) when CUDA is there."""
        import torch

        if self.distributed and device in ("auto", "cuda") and torch.cuda.is_available():
            return f"cuda:{self.local_rank % torch.cuda.device_count()}"
        return device

    def shard(self, items: Sequence[Item]) -> list[Item]:
        """This process's items: those whose first image is dealt to it."""
        if not self.distributed:
            return list(items)
        index: dict[str, int] = {}
        for item in items:
            for ref in item.images:
                index.setdefault(ref.key, len(index))
        return [it for it in items if index[it.images[0].key] % self.world == self.rank]

    @property
    def part(self) -> tuple[int, int] | None:
        """This process's part of the run's scores, ``(rank, world)``; None for one process."""
        return (self.rank, self.world) if self.distributed else None

    def prepare(self, folder: RunFolder, resume: bool) -> None:
        """Before scoring, on the main process: a resume folds leftover parts into
        ``scores.jsonl``; a fresh run removes the old parts (those the run's marker lists) and
        scores."""
        if not self.main:
            return
        if resume:
            folder.fold_parts()
        else:
            folder.remove_parts()

    def agree(self, refusal: BaseException | None) -> None:
        """After the main process's checks: ``refusal`` (the main process's error, or None) is
        raised there, and the other processes stop with a line that points to it, instead of
        waiting at a barrier the main process never reaches."""
        if self.distributed:
            import torch
            import torch.distributed as dist

            self.barrier()
            flag = torch.tensor([int(refusal is not None)], dtype=torch.long)
            dist.all_reduce(flag)
            if refusal is None and flag.item():
                self.close()
                raise ValueError(
                    f"process {self.rank} of {self.world} stops: the main process (rank 0) "
                    "refused the run (its error line says why)"
                )
        if refusal is not None:
            self.close()
            raise refusal

    def pending(
        self, items: Sequence[Item], done: Any, folder: RunFolder, resume: bool
    ) -> list[Item]:
        """This process's items without a record (``done(item)``: in its own scores file; a
        resumed multi-process run also skips those of the merged ``scores.jsonl``)."""
        merged = folder.merged_records() if resume and self.distributed else {}
        return [it for it in self.shard(items) if not done(it) and (it.task, it.id) not in merged]

    def gather(
        self, folder: RunFolder, items: Sequence[Item], images_per_batch: int, scored: int
    ) -> int:
        """After scoring: wait for all; the main process merges the parts into ``scores.jsonl``
        in the order one process writes it. Returns the number of items scored by all
        processes together."""
        if not self.distributed:
            return scored
        total = self.sum(scored)
        if self.main:
            order = single_process_order(items, images_per_batch)
            folder.merge_parts([(it.task, it.id) for it in order])
        return total

    def finish(self) -> None:
        """The main process has written ``results.json``: all wait for that, then leave."""
        self.barrier()
        self.close()

    def sum(self, value: int) -> int:
        """``value`` summed over the processes (every process calls it)."""
        if not self.distributed:
            return value
        import torch
        import torch.distributed as dist

        self.barrier()
        tensor = torch.tensor([value], dtype=torch.long)
        dist.all_reduce(tensor)
        return int(tensor.item())

    def barrier(self) -> None:
        """Wait until every process gets here (no-op for one process)."""
        if not self.distributed:
            return
        import torch.distributed as dist

        if not dist.is_initialized():
            dist.init_process_group("gloo", timeout=timedelta(seconds=self.timeout_s))
        dist.barrier()

    def close(self) -> None:
        """Leave the process group (at the end of a run)."""
        if not self.distributed:
            return
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def single_process_order(items: Sequence[Item], images_per_batch: int = 32) -> list[Item]:
    """The items in the order one process writes them (``bla_eval.scoring.score_items``: by
    distinct image, an item as soon as all its images are scored)."""
    from .scoring import group_by_image

    groups = group_by_image(items)
    seen: set[str] = set()
    written: set[int] = set()
    order = []
    for batch in chunks(list(groups), images_per_batch):
        for key in batch:
            seen.add(key)
            for item in groups[key]:
                if id(item) in written or any(r.key not in seen for r in item.images):
                    continue
                order.append(item)
                written.add(id(item))
    return order


def _env_int(env: dict[str, str], name: str, default: int) -> int:
    """The whole number of the environment variable ``name`` (``default`` when unset or
    empty), from -1 to :data:`MAX_PROCESSES`; anything else is a ValueError naming the
    variable."""
    text = env.get(name, "")
    if not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"environment variable {name}={text[:40]!r} is not a whole number"
        ) from None
    return check_range(f"environment variable {name}", value, -1, MAX_PROCESSES)


def _env_seconds(env: dict[str, str], name: str, default: float) -> float:
    """Seconds from the environment variable ``name``: a number from 1 to
    :data:`MAX_TIMEOUT_S` (``default`` when unset or empty; else a ValueError naming it)."""
    text = env.get(name, "")
    if not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    where = f"environment variable {name}"
    return check_range(where, value, 1, MAX_TIMEOUT_S, whole=False, given=repr(text[:40]))
