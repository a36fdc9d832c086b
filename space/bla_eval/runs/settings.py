"""The settings a run records in ``run.json`` and a resume must match.

Which settings decide the scores is said once, in the metadata of ``RunConfig``'s fields
(``option(..., resume=...)``); :func:`resume_settings` reads them there and adds what the run
resolved (kind, dataset, tasks) and, for a model behind an endpoint, how it is asked.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ..api.settings import api_settings
from ..config import Recorded, RunConfig
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
    settings = {}
    for f in fields(config):
        rule = f.metadata.get("resume")
        if rule is None or (rule is Recorded.BY_PROTOCOL and f.name not in by_protocol):
            continue
        value = resolved.get(f.name, getattr(config, f.name))
        if rule is Recorded.BY_KIND and not getattr(scorer, f"takes_{f.name}"):
            value = None
        if f.name == "regions" and value is not None:
            from ..regions.source import regions_record

            value = regions if regions is not None else regions_record(value)
        settings[f.name] = list(value) if isinstance(value, (tuple, list)) else value
    if model is not None and model.content_hash is not None:
        settings[MODEL_HASH] = model.content_hash
    if data_hash is not None:
        settings[DATA_HASH] = data_hash
    if scorer.remote:  # the endpoint and how it is asked
        settings |= api_settings(config).scoring_record()
    return settings


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
