"""The settings a run records in ``run.json`` and a resume must match.

Which settings decide the scores is said once, in the metadata of ``RunConfig``'s fields
(``option(..., resume=...)``); :func:`resume_settings` reads them there and adds what the run
resolved (kind, dataset, tasks, content hashes).
"""

from __future__ import annotations

import importlib
from dataclasses import Field, fields
from typing import Any

from ..config import KIND_READS, Recorded, RunConfig
from ..protocols import DEFAULT_PROTOCOL, get_protocol
from ..scorers import ResolvedModel, scorer_class

MODEL_HASH = "model_sha256"
"""The ``run.json`` key of a local model's content hash (``ResolvedModel.content_hash``)."""

DATA_HASH = "data_sha256"
"""The ``run.json`` key of a local dataset folder's content hash (``data.content_hash``)."""

RECORDED_LATER = {
    "benchmark": "bla",
    "protocol": DEFAULT_PROTOCOL,
    "tasks": None,
    "limit": None,
    MODEL_HASH: None,
    DATA_HASH: None,
    "prompts": [],
    "control_seed": 0,
}
"""Settings that the ``run.json`` of older runs lacks: the value they had (None: unknown, then
the records of ``scores.jsonl`` are checked against the run's items instead: a run of an
earlier version resumes on a dataset folder rebuilt since only where its kept records' labels
and caption types agree with the items)."""


def resume_settings(
    config: RunConfig,
    kind: str,
    data: str,
    tasks: list[str] | None = None,
    model: ResolvedModel | None = None,
    regions: dict[str, Any] | None = None,
    data_hash: str | None = None,
) -> dict[str, Any]:
    """The settings that decide which datapoints are scored and how: a resumed run must have
    the same (``kind``, ``data``, ``tasks``: as the run resolved them; with the resolved
    ``model``, the content hash of a model on this machine; ``regions``: what made the region
    features, ``bla_eval.regions.source``'s record, read from ``--regions`` when not given;
    ``data_hash``, the dataset folder's)."""
    scorer = scorer_class(kind)
    by_protocol = get_protocol(config.protocol).resume_settings
    resolved = {"kind": kind, "data": data, "tasks": tasks if tasks is not None else config.tasks}
    if regions is not None:
        resolved["regions"] = regions
    settings = {}
    for f in fields(config):
        rule = f.metadata.get("resume")
        if rule is None or (rule is Recorded.BY_PROTOCOL and f.name not in by_protocol):
            continue
        by_kind = rule in (Recorded.BY_KIND, Recorded.IF_READ)
        if by_kind and not getattr(scorer, KIND_READS[f.name][0]):  # a kind that reads it not
            if rule is Recorded.BY_KIND:
                settings[f.name] = None
            continue
        settings[f.name] = _recorded(f, resolved, getattr(config, f.name))
    if model is not None and model.content_hash is not None:
        settings[MODEL_HASH] = model.content_hash
    if data_hash is not None:
        settings[DATA_HASH] = data_hash
    return settings


def _recorded(f: Field, resolved: dict[str, Any], value: Any) -> Any:
    """What ``run.json`` records of the setting ``f``: the run's resolved value, else what its
    ``record`` function makes of its value, as JSON values."""
    if f.name in resolved:
        value = resolved[f.name]
    elif value is not None and "record" in f.metadata:
        module, name = f.metadata["record"].split(":")
        value = getattr(importlib.import_module(module), name)(value)
    return list(value) if isinstance(value, (tuple, list)) else value


def changed_settings(previous: dict[str, Any], settings: dict[str, Any]) -> dict[str, tuple]:
    """{setting: (before, now)} of every setting that differs (either side may lack a key: a
    setting older runs did not record counts as its value then, or is not compared)."""
    changed = {}
    for key in sorted(previous.keys() | settings.keys()):
        if key in previous:
            before = previous[key]
        elif RECORDED_LATER.get(key) is not None:
            before = RECORDED_LATER[key]
        elif key in RECORDED_LATER:
            continue
        else:
            before = None
        if before != settings.get(key):
            changed[key] = (before, settings.get(key))
    return changed
