"""inspect-ai logs of BLA's tasks, read for ``bla-eval export``: one ``.eval_results`` entry per
log of a BLA task, naming inspect-ai as the framework that produced it.

Two kinds of BLA task write such logs: the package's own (``bla_eval/<config>``, whose metrics
are BLA's; the value exported is the benchmark's headline, the ranking view's sentence accuracy)
and the Hub's (``hf/<org>/<name>/<config>``, the tasks of the dataset's ``eval.yaml``; the
value is the accuracy of the yes/no answers). A log is an ``.eval`` file (a zip of JSON files,
compressed with zstd: read through ``zipfile_zstd``, which inspect-ai installs) or a ``.json``
log (``inspect eval --log-format json``; the standard library reads it).
"""

from __future__ import annotations

import contextlib
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bla_metric import hub_ids
from bla_metric.tasks import TASKS

from ..benchmarks.bla import BENCHMARK

LOG_SUFFIXES = (".eval", ".json")
FRAMEWORK = "inspect-ai"
HEADER = "header.json"
OWN_PREFIX = "bla_eval/"
HUB_PREFIX = "hf/"
HUB_METRIC = "accuracy"
"""The metric of the Hub's tasks (inspect's ``match`` scorer) that is exported."""


@dataclass(frozen=True)
class LogResult:
    """What one log says about one BLA task."""

    config: str
    value: float
    dataset_id: str
    date: str | None
    notes: str


def is_log_folder(path: Path) -> bool:
    """A folder of inspect logs (and not a bla-eval run folder)."""
    return path.is_dir() and not (path / "results.json").exists() and bool(log_files(path))


def log_files(path: Path) -> list[Path]:
    """The inspect logs of a folder, or the one log file given."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.suffix in LOG_SUFFIXES and p.is_file())


def read_header(path: Path) -> dict[str, Any]:
    """The log's header (``eval``, ``results``, ``status``); a ValueError names a file that is
    not an inspect log."""
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise ValueError(f"{path} is not an inspect log: {err}") from None
    else:
        doc = _eval_header(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        raise ValueError(f"{path} is not an inspect log (no 'eval' section)")
    return doc


def _eval_header(path: Path) -> Any:
    with contextlib.suppress(ImportError):  # zipfile_zstd adds zstd to zipfile
        import zipfile_zstd  # noqa: F401
    try:
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read(HEADER))
    except NotImplementedError:
        raise ValueError(
            f"{path} is compressed with zstd: read it where inspect-ai is installed (it brings "
            "zipfile-zstd), or write the log with `inspect eval --log-format json`"
        ) from None
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"{path} is not an inspect .eval log: {err}") from None


def task_config(task: str) -> str | None:
    """The BLA config of an inspect task name, or None for a task of another benchmark."""
    configs = {t.config for t in TASKS.values()}
    for prefix in (OWN_PREFIX, HUB_PREFIX):
        if task.startswith(prefix) and task.rsplit("/", 1)[-1] in configs:
            if prefix == HUB_PREFIX and task.count("/") != 3:
                return None
            return task.rsplit("/", 1)[-1]
    return None


def log_result(path: Path, dataset: str | None = None) -> LogResult:
    """The exported value of one log (a ValueError names a log of another benchmark, or one
    that did not finish)."""
    header = read_header(path)
    spec = header["eval"]
    task = str(spec.get("task", ""))
    config = task_config(task)
    if config is None:
        raise ValueError(f"{path} is a log of inspect task {task!r}, not of a BLA task")
    if header.get("status") != "success":
        raise ValueError(f"{path}: the inspect run did not finish (status {header.get('status')})")
    metrics = _metrics(header)
    version = (spec.get("packages") or {}).get("inspect_ai", "")
    n = (header.get("results") or {}).get("completed_samples")
    common = [f"{FRAMEWORK} {version}".strip(), f"task {task}", f"model {spec.get('model')}"]
    common.append(f"n {n}")
    if task.startswith(HUB_PREFIX):
        key = HUB_METRIC
        notes = "yes/no answer accuracy per sentence (match scorer, %)"
        hub_id = dataset or "/".join(task.split("/")[1:3])
    else:
        view = BENCHMARK.main_view
        key = f"{view}.{BENCHMARK.headline[view]}"
        notes = f"headline {BENCHMARK.headline[view]} ({view} view, %)"
        data = str((spec.get("task_args") or {}).get("data") or "")
        hub_id = dataset or (data if _hub_id(data) else hub_ids.DATASET)
    if key not in metrics:
        raise ValueError(f"{path} has no metric {key!r} (it has: {', '.join(sorted(metrics))})")
    return LogResult(
        config=config,
        value=round(100 * float(metrics[key]), 2),
        dataset_id=hub_id,
        date=spec.get("created"),
        notes="; ".join([*common, notes]),
    )


def _hub_id(data: str) -> bool:
    return data.count("/") == 1 and not data.startswith((".", "/", "~")) and not Path(data).exists()


def _metrics(header: dict[str, Any]) -> dict[str, float]:
    """Every metric of the log's scorers by name."""
    out: dict[str, float] = {}
    for score in (header.get("results") or {}).get("scores") or []:
        for name, metric in (score.get("metrics") or {}).items():
            if isinstance(metric, dict) and isinstance(metric.get("value"), (int, float)):
                out[name] = float(metric["value"])
    return out
