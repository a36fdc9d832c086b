"""One cell as a job an executor runs anywhere: its settings in JSON values, and the outcome.

``run_job`` is the only code that runs in a worker (a local process, a Ray task, a Slurm job):
the same engine entry point as ``bla-eval`` (``RunConfig`` + ``bla_eval.run.evaluate``)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Job:
    """A cell to run: its id, run folder, settings, whether to resume, torch threads."""

    id: str
    output_dir: str
    settings: dict[str, Any]
    resume: bool
    threads: int = 1


@dataclass
class Outcome:
    """What became of a job: ``error`` is the run's one error line (None when it finished)."""

    id: str
    error: str | None = None
    seconds: float = 0.0
    host: str = field(default_factory=lambda: os.uname().nodename)

    @property
    def ok(self) -> bool:
        return self.error is None


def run_job(job: Job) -> Outcome:
    """Run the cell's ``bla-eval`` run in this process; any error becomes the outcome's line."""
    from ..cli_common import one_line
    from ..extras import install_hint

    start = time.perf_counter()
    os.environ.setdefault("TQDM_DISABLE", "1")  # one progress display: the sweep's
    try:
        import torch

        torch.set_num_threads(job.threads)
        from ..config import RunConfig
        from ..run import evaluate

        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in job.settings.items()}
        evaluate(RunConfig(output_dir=Path(job.output_dir), resume=job.resume, **settings))
    except Exception as err:  # noqa: BLE001  (reported as the cell's line; the others go on)
        hint = install_hint(err) if isinstance(err, ModuleNotFoundError) else None
        return Outcome(job.id, hint or one_line(err), time.perf_counter() - start)
    return Outcome(job.id, None, time.perf_counter() - start)
