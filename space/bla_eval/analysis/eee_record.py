"""A run's numbers with their uncertainty as an Every Eval Ever record (``bla-eval export``).

The Hub's ``.eval_results`` entries hold one value each and no uncertainty; the Every Eval Ever
schema (``every-eval-ever`` 0.3.0 on PyPI, ``schemas/eval.schema.json``) has
``score_details.uncertainty``: standard error, confidence interval with level and method, the
number of samples and of bootstrap resamples. ``bla-eval export`` writes one record per run
(:data:`RECORD_FILE`, beside ``bla.yaml``) with, per task, the exported value (the yes/no answer
accuracy of the dataset's ``eval.yaml`` task) and BLA's headline, each with the interval the
entry's notes give and the standard error of
:func:`bla_metric.stats.uncertainty.ratio_standard_error`;
the entries link it in ``source.url`` when the model repo is known (``--repo-id``).

The schema allows no key of its own at the top, so the record's mark (what lets ``export``
replace it) is ``source_metadata.additional_details.written_by``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..outputs import MARK_KEY, naming, parse_json, read_regular, refuse_link

SCHEMA_VERSION = "0.3.0"
"""The Every Eval Ever schema version the record follows."""
RECORD_FILE = "bla.every-eval-ever.json"
"""The record's name, in the ``.eval_results`` folder beside ``bla.yaml``."""
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """One number of a task with its uncertainty: ``interval`` None where it has none (no
    variation over the resamples), ``standard_error`` NaN where undefined."""

    value: float
    interval: tuple[float, float] | None
    interval_method: str
    standard_error: float
    standard_error_method: str
    n: int
    resamples: int


@dataclass(frozen=True)
class Measured:
    """One record entry: what was measured on which task, and its :class:`Estimate`."""

    task: str
    result_id: str
    name: str
    metric_id: str
    metric_name: str
    description: str
    estimate: Estimate


def record_url(repo_id: str, folder: str) -> str:
    """The record's address in the model repo ``repo_id`` once the export's pull request is
    merged (``folder``: the ``.eval_results`` folder)."""
    return f"https://huggingface.co/{repo_id}/blob/main/{folder}/{RECORD_FILE}"


def uncertainty(estimate: Estimate) -> dict[str, Any]:
    """The schema's ``score_details.uncertainty`` of ``estimate``."""
    out: dict[str, Any] = {}
    if math.isfinite(estimate.standard_error):
        out["standard_error"] = {
            "value": estimate.standard_error,
            "method": estimate.standard_error_method,
        }
    if estimate.interval is not None:
        out["confidence_interval"] = {
            "lower": estimate.interval[0],
            "upper": estimate.interval[1],
            "confidence_level": CONFIDENCE,
            "method": estimate.interval_method,
        }
    out["num_samples"] = estimate.n
    out["num_bootstrap_samples"] = estimate.resamples
    return out


def result(measured: Measured, dataset: dict[str, Any]) -> dict[str, Any]:
    """One entry of the schema's ``evaluation_results`` (``dataset``: its ``source_data``)."""
    estimate = measured.estimate
    details = {} if estimate.interval is not None else {"interval": "no variation"}
    return {
        "evaluation_result_id": measured.result_id,
        "evaluation_name": measured.name,
        "source_data": {**dataset, "samples_number": estimate.n},
        "metric_config": {
            "evaluation_description": measured.description,
            "metric_id": measured.metric_id,
            "metric_name": measured.metric_name,
            "metric_kind": "accuracy",
            "metric_unit": "proportion",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        },
        "score_details": {
            "score": estimate.value,
            **({"details": details} if details else {}),
            "uncertainty": uncertainty(estimate),
        },
    }


def epoch(created: str) -> str:
    """The run's creation time (ISO 8601) as Unix epoch seconds, the schema's format."""
    return str(int(datetime.fromisoformat(created).timestamp()))


def build_record(
    results: dict[str, Any],
    model_name: str,
    measured: list[Measured],
    datasets: dict[str, dict[str, Any]],
    details: dict[str, str],
    command: str,
) -> dict[str, Any]:
    """The record of a run (``results``: its results.json; ``datasets``: per task the
    ``source_data``; ``details``: strings for ``source_metadata.additional_details``, which
    also holds ``command``'s mark)."""
    model = str(results.get("model") or "")
    created = str(results.get("created") or "")
    kind = str(results.get("kind") or "")
    model_details = {
        "deployment_type": "externally_managed" if kind == "openai-api" else "self_deployed",
        "model_availability": "unknown",
        "kind": kind,
    }
    if results.get("model_revision"):
        model_details["revision"] = str(results["model_revision"])
    benchmark = str(results.get("benchmark") or "bla")
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{benchmark}/{model}/{epoch(created)}",
        "evaluation_timestamp": created,
        "retrieved_timestamp": epoch(created),
        "source_metadata": {
            "source_name": "bla-eval",
            "source_type": "evaluation_run",
            "source_organization_name": "bla-eval",
            "evaluator_relationship": "other",
            "additional_details": {MARK_KEY: command, **details},
        },
        "eval_library": {"name": "bla-eval", "version": str(results.get("bla_eval_version", ""))},
        "model_info": {
            "name": model_name,
            "id": model,
            "additional_details": model_details,
        },
        "evaluation_results": [result(m, datasets[m.task]) for m in measured],
    }


def check_record_replaceable(path: Path, command: str) -> Path:
    """Allow writing the record at ``path`` when it is absent or carries ``command``'s mark; a
    symbolic link or any other file is refused (FileExistsError naming it)."""
    try:
        refuse_link(path)
    except ValueError as err:
        raise FileExistsError(str(err)) from None
    if not path.exists():
        return path
    if not path.is_file() or written_by(path) != command:
        raise FileExistsError(
            f"{path} exists and was not written by `{command}`: move it away or choose "
            "another --output"
        )
    return path


def written_by(path: Path) -> str | None:
    """The command named by a record's mark, or None (not a record, or none)."""
    try:
        with naming(path):
            document = parse_json(read_regular(path).decode("utf-8"))
    except (ValueError, OSError):
        return None
    meta = document.get("source_metadata") if isinstance(document, dict) else None
    details = meta.get("additional_details") if isinstance(meta, dict) else None
    mark = details.get(MARK_KEY) if isinstance(details, dict) else None
    return mark if isinstance(mark, str) else None


def record_text(record: dict[str, Any]) -> str:
    """The file text of ``record`` (``bla-eval export`` writes it beside ``bla.yaml``)."""
    return json.dumps(record, indent=2, allow_nan=False) + "\n"
