"""One cell as a job an executor runs anywhere: its settings in JSON values, and the outcome.

``run_job`` is the only code that runs in a worker (a local process, a Ray task, a Slurm job):
the same engine entry point as ``bla-eval`` (``RunConfig`` + ``bla_eval.run.evaluate``), after
checking that this node sees the sweep folder (its marker lists the cell), and recording itself
as the cell's runner while it runs (``runners``)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Job:
    """A cell to run: its id, run folder, settings, whether to resume, torch threads, and the
    sweep folder (absolute paths, as the driver resolved them)."""

    id: str
    output_dir: str
    settings: dict[str, Any]
    resume: bool
    threads: int = 1
    sweep: str = ""


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

    start = time.perf_counter()
    os.environ.setdefault("TQDM_DISABLE", "1")  # one progress display: the sweep's
    if job.sweep:
        unseen = unreachable(job)
        if unseen is not None:
            return Outcome(job.id, unseen, time.perf_counter() - start)
        from .runners import running

        try:
            with running(job.sweep, job.id):
                return _run(job, start)
        except (OSError, ValueError) as err:  # the runner record could not be written (a link)
            return Outcome(job.id, one_line(err), time.perf_counter() - start)
    return _run(job, start)


def unreachable(job: Job) -> str | None:
    """Why this node cannot run the cell in the driver's sweep folder (its marker missing, or
    not listing the cell: another file system at that path); None when it can."""
    from ..outputs import OWNER_FILE, read_json

    marker = Path(job.sweep) / OWNER_FILE
    try:
        cells = read_json(marker).get("cells", []) if marker.is_file() else None
    except (OSError, ValueError):
        cells = None
    if isinstance(cells, list) and job.id in cells:
        return None
    return (
        f"host {os.uname().nodename} does not see the sweep folder {job.sweep} (no bla-eval "
        f"sweep marker listing the cell at {marker}): the workers need the driver's file system "
        "at the same path"
    )


def _run(job: Job, start: float) -> Outcome:
    from ..cli_common import one_line
    from ..extras import install_hint

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
