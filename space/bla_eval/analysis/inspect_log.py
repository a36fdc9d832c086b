"""inspect-ai logs of BLA's tasks, read for ``bla-eval export``: one ``.eval_results`` entry per
log of a BLA task, naming inspect-ai as the framework that produced it.

Two kinds of BLA task write such logs, and both give the value of the dataset's ``eval.yaml``
task of the same id (``answer_match.py``: yes/no answer accuracy per sentence, in [0, 1]): the
package's own (``bla_eval/<config>``, metric ``answer_match``; BLA's headline goes in the notes)
and the Hub's (``hf/<org>/<name>[/<config>][@<rev>]/<config>``, inspect's ``match`` scorer,
metric ``accuracy``). The dataset is the log's ``eval.dataset.location`` (a Hub id; a local path
is refused unless ``--dataset-id`` names the Hub dataset it copies), its revision the ``@<rev>``
of the task as typed, ``-T revision=...`` or ``eval.dataset.revision``.

A log is an ``.eval`` file (a zip of JSON files, compressed with zstd: read through
``zipfile_zstd``, which inspect-ai installs) or a ``.json`` log. Its header is read within caps
(the zip member's declared size before anything is inflated, then a capped stream; nesting
depth: ``outputs.parse_json``) and schema-checked (``log_schema.py``): types, finite numbers,
proportions in [0, 1].
"""

from __future__ import annotations

import contextlib
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bla_metric.tasks import TASKS

from ..benchmarks.bla import BENCHMARK
from ..harnesses.answer_match import METRIC as OWN_METRIC
from ..outputs import parse_json, read_regular
from .log_schema import checked_header, proportion

LOG_SUFFIXES = (".eval", ".json")
FRAMEWORK = "inspect-ai"
HEADER = "header.json"
OWN_PREFIX = "bla_eval/"
HUB_PREFIX = "hf/"
HUB_METRIC = "accuracy"
"""The metric of the Hub's tasks (inspect's ``match`` scorer) that is exported."""
MAX_HEADER_BYTES = 16 * 1024 * 1024
"""The most bytes a ``.eval`` log's header may inflate to (a header holds no samples)."""
MAX_JSON_LOG_BYTES = 1024 * 1024 * 1024
"""The largest ``.json`` log read (it holds every sample, images included)."""
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class LogResult:
    """What one log says about one BLA task."""

    config: str
    value: float
    dataset_id: str
    revision: str | None
    date: str | None
    notes: str
    partial: str | None
    """Why the log covers only part of the task's samples (None: all of them)."""


def is_log_folder(path: Path) -> bool:
    """A folder of inspect logs (and not a bla-eval run folder)."""
    return path.is_dir() and not (path / "results.json").exists() and bool(log_files(path))


def log_files(path: Path) -> list[Path]:
    """The inspect logs of a folder, or the one log file given."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.suffix in LOG_SUFFIXES and p.is_file())


def read_header(path: Path) -> dict[str, Any]:
    """The log's header (``eval``, ``results``, ``status``), schema-checked; a ValueError names a
    file that is not an inspect log, or one too large or too deep to read."""
    if path.suffix == ".json":
        size = path.stat().st_size
        if size > MAX_JSON_LOG_BYTES:
            raise ValueError(f"{path} is {size} bytes, over the {MAX_JSON_LOG_BYTES} read")
        doc = _parse(path, read_regular(path))
    else:
        doc = _parse(path, _eval_header(path))
    return checked_header(path, doc)


def _parse(path: Path, data: bytes) -> Any:
    """The JSON document of a log (``parse_json``: nesting depth capped)."""
    try:
        return parse_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"{path} is not an inspect log: {err}") from None


def _eval_header(path: Path) -> bytes:
    """The header member's bytes: its declared size checked first, then read through a stream
    that stops one byte past the cap (a size the zip lies about is caught too)."""
    with contextlib.suppress(ImportError):  # zipfile_zstd adds zstd to zipfile
        import zipfile_zstd  # noqa: F401
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(HEADER)
            if info.file_size > MAX_HEADER_BYTES:
                raise ValueError(
                    f"{path}: its {HEADER} declares {info.file_size} bytes, over the "
                    f"{MAX_HEADER_BYTES} an inspect header may have"
                )
            with archive.open(info) as member:
                data = member.read(MAX_HEADER_BYTES + 1)
    except NotImplementedError:
        raise ValueError(
            f"{path} is compressed with zstd: read it where inspect-ai is installed (it brings "
            "zipfile-zstd), or write the log with `inspect eval --log-format json`"
        ) from None
    except (zipfile.BadZipFile, KeyError, OSError, EOFError) as err:
        raise ValueError(f"{path} is not an inspect .eval log: {err}") from None
    if len(data) > MAX_HEADER_BYTES:
        raise ValueError(f"{path}: its {HEADER} inflates past {MAX_HEADER_BYTES} bytes")
    return data


def hub_spec(task: str) -> tuple[str, str, str | None] | None:
    """(repo id as typed, eval.yaml task id, revision) of a Hub task's name as inspect logs it
    (``hf/<org>/<name>[/<id>][@<rev>]/<id>``); None for any other name."""
    if not task.startswith(HUB_PREFIX):
        return None
    typed, _, config = task[len(HUB_PREFIX) :].rpartition("/")
    typed, _, revision = typed.partition("@")
    if "/" in revision:  # ``org/name@rev/id`` typed with the id after the revision
        revision, _, _ = revision.partition("/")
    parts = typed.split("/")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != config):
        return None
    return "/".join(parts[:2]), config, revision or None


def task_config(task: str) -> str | None:
    """The BLA config of an inspect task name, or None for a task of another benchmark."""
    configs = {t.config for t in TASKS.values()}
    if task.startswith(OWN_PREFIX):
        config = task[len(OWN_PREFIX) :]
    else:
        spec = hub_spec(task)
        config = spec[1] if spec else None
    return config if config in configs else None


def partial_reason(spec: dict[str, Any], header: dict[str, Any]) -> str | None:
    """Why the log covers only part of its dataset (``--limit``, ``--sample-id``, samples not
    completed), or None for a whole run."""
    config = spec.get("config") or {}
    total = (spec.get("dataset") or {}).get("samples")
    limit = config.get("limit")
    if isinstance(limit, list):
        start, end = limit
        if total is None or start > 0 or end < total:
            return f"config.limit {limit} of {total} samples"
    elif limit is not None and (total is None or limit < total):
        return f"config.limit {limit} of {total} samples"
    if config.get("sample_id") is not None:
        return f"config.sample_id {config['sample_id']}"
    done = (header.get("results") or {}).get("completed_samples")
    epochs = config.get("epochs") or 1
    if total is not None and done is not None and done < total * epochs:
        return f"{done} of {total * epochs} samples completed"
    return None


def log_dataset(path: Path, spec: dict[str, Any], override: str | None) -> str:
    """The Hub dataset id: ``override``, else the log's ``eval.dataset.location``."""
    if override:
        return override
    location = (spec.get("dataset") or {}).get("location")
    data = str((spec.get("task_args") or {}).get("data") or "")
    location = location or data or None
    if location is None:
        raise ValueError(f"{path} names no dataset location: give --dataset-id ORG/NAME")
    if not _hub_id(str(location)):
        raise ValueError(
            f"{path} ran on the local dataset {location!r}: give --dataset-id ORG/NAME of the "
            "Hub dataset it is a copy of"
        )
    return str(location)


def log_revision(spec: dict[str, Any], typed: str | None) -> str | None:
    """The dataset revision the log ran on: ``@<rev>``, ``-T revision=``, ``dataset.revision``."""
    args = spec.get("task_args") or {}
    found = typed or args.get("revision") or (spec.get("dataset") or {}).get("revision")
    return str(found) if found else None


def log_result(path: Path, dataset: str | None = None) -> LogResult:
    """The exported value of one log (a ValueError names a log of another benchmark, one that
    did not finish, or one whose metric is missing or out of range)."""
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
    hub = hub_spec(task)
    key = HUB_METRIC if hub else OWN_METRIC
    if key not in metrics:
        raise ValueError(f"{path} has no metric {key!r} (it has: {', '.join(sorted(metrics))})")
    value = proportion(path, key, metrics[key])
    notes = [f"{FRAMEWORK} {version}".strip(), f"task {task}", f"model {spec.get('model')}"]
    if hub:
        notes.append(f"n {n} sentences")
        stderr = metrics.get("stderr")
        if stderr is not None:
            low, high = max(0.0, value - 1.96 * stderr), min(1.0, value + 1.96 * stderr)
            notes.append(f"95% CI [{low:.4f}, {high:.4f}] (normal, inspect's stderr)")
    else:
        count = metrics.get("n", n)
        notes.append(f"n {int(count) if count is not None else None} datapoints")
        low, high = metrics.get(f"{OWN_METRIC}_ci_low"), metrics.get(f"{OWN_METRIC}_ci_high")
        if low is not None and high is not None:
            notes.append(f"95% CI [{low:.4f}, {high:.4f}] (bootstrap over datapoints)")
        view = BENCHMARK.main_view
        headline = f"{view}.{BENCHMARK.headline[view]}"
        if headline in metrics:
            number = proportion(path, headline, metrics[headline])
            notes.append(f"BLA headline {headline} {number:.4f}")
    notes.append(f"per-datapoint scores: the samples of {path.name}")
    revision = log_revision(spec, hub[2] if hub else None)
    if revision and not COMMIT_RE.match(revision):
        notes.append(f"dataset revision {revision}")
    return LogResult(
        config=config,
        value=round(value, 4),
        dataset_id=log_dataset(path, spec, dataset),
        revision=revision if revision and COMMIT_RE.match(revision) else None,
        date=spec.get("created"),
        notes="; ".join(notes),
        partial=partial_reason(spec, header),
    )


def _hub_id(data: str) -> bool:
    parts = data.split("/")
    looks = len(parts) == 2 and all(parts) and not data.startswith((".", "~"))
    return looks and not Path(data).exists()


def _metrics(header: dict[str, Any]) -> dict[str, float]:
    """Every metric of the log's scorers by name (values checked by ``checked_header``)."""
    out: dict[str, float] = {}
    for score in (header.get("results") or {}).get("scores") or []:
        for name, metric in (score.get("metrics") or {}).items():
            out[name] = float(metric["value"])
    return out
