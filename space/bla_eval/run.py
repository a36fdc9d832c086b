"""One evaluation run: load data and model, score what is not scored yet, write the results."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__
from .data import Datapoint, config_name, default_data, load_datapoints
from .results import (
    RESULTS_FILE,
    RUN_FILE,
    SCORES_FILE,
    ScoreStore,
    task_metrics,
    write_json_atomic,
)
from .scorers import LoadOptions, Scorer, detect_kind, load_scorer, scorer_class
from .scoring import Progress, score_datapoints

DEFAULT_TASKS = ("ap", "co", "rc")


def _check_resume(out: Path, settings: dict[str, Any], resume: bool) -> None:
    """On resume, the settings that decide the scores must equal those of the interrupted run."""
    path = out / RUN_FILE
    if resume and path.exists():
        previous = json.loads(path.read_text(encoding="utf-8"))
        changed = {k: (previous.get(k), v) for k, v in settings.items() if previous.get(k) != v}
        if changed:
            detail = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(f"cannot resume {out}: the run settings changed ({detail})")
    write_json_atomic(path, settings)


def _dataset_revision(data: str) -> str | None:
    manifest = Path(data) / "manifest.json"
    if manifest.is_file():
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        return doc.get("dataset_version") or doc.get("version")
    return None


def evaluate(
    model: str,
    output_dir: str | Path,
    *,
    data: str | None = None,
    tasks: Sequence[str] = DEFAULT_TASKS,
    split: str = "test",
    limit: int | None = None,
    batch_size: int = 32,
    device: str = "auto",
    dtype: str | None = None,
    kind: str | None = None,
    resume: bool = False,
    trust_remote_code: bool = False,
    progress: Progress | None = None,
    similarity: str = "cosine",
    gguf_file: str | None = None,
) -> dict[str, Any]:
    """Score ``model`` on BLA; write ``results.json`` and ``scores.jsonl`` into ``output_dir``.

    ``progress(done, total, desc)`` is called after each batch. With ``resume``, datapoints
    already in ``scores.jsonl`` are not scored again. Returns the results document.
    """
    clock = {"start": time.perf_counter()}
    data = data or default_data()
    configs = [config_name(t) for t in tasks]
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    points = load_datapoints(data, configs, split, limit)
    clock["data"] = time.perf_counter()

    kind = kind or detect_kind(model, trust_remote_code)
    dual = kind in ("contrastive", "open_clip")
    settings = {
        "model": model, "gguf_file": gguf_file, "kind": kind, "data": data, "split": split,
        "dtype": dtype, "similarity": similarity if dual else None,
    }  # fmt: skip
    _check_resume(out, settings, resume)
    store = ScoreStore(out / SCORES_FILE, resume)
    pending = [p for p in points if not store.done(p)]
    scorer = None
    try:
        if pending:
            if progress is not None:
                progress(0, len(pending), f"loading {kind} model")
            options = LoadOptions(device, dtype, trust_remote_code, similarity, gguf_file)
            scorer = load_scorer(model, kind, batch_size, options)
        clock["model"] = time.perf_counter()
        if scorer is not None:
            score_datapoints(scorer, pending, store.add, batch_size, progress)
    finally:
        store.close()
    clock["scored"] = time.perf_counter()

    probabilistic = scorer_class(kind).probabilistic
    protocol = {
        "tasks": configs, "limit": limit, "batch_size": batch_size,
        "device": str(getattr(scorer, "device", device)), "dtype": dtype,
        "binary_view": "threshold 0.5" if probabilistic else "top-k",
        **(scorer.describe() if scorer is not None else {}),
    }  # fmt: skip
    timings = {
        "load_data_s": round(clock["data"] - clock["start"], 3),
        "load_model_s": round(clock["model"] - clock["data"], 3),
        "scoring_s": round(clock["scored"] - clock["model"], 3),
        "total_s": round(time.perf_counter() - clock["start"], 3),
        "datapoints_scored": len(pending),
        "datapoints_resumed": len(points) - len(pending),
    }
    results = {
        "model": model,
        "model_revision": _model_revision(scorer),
        "kind": kind,
        "dataset": data,
        "dataset_revision": _dataset_revision(data),
        "split": split,
        "protocol": protocol,
        "tasks": _task_results(configs, points, store.records, probabilistic),
        "timings": timings,
        "scores_file": SCORES_FILE,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "bla_eval_version": __version__,
    }
    write_json_atomic(out / RESULTS_FILE, results)
    return results


def _model_revision(scorer: Scorer | None) -> str | None:
    """The Hub commit the weights came from, when transformers recorded one."""
    config = getattr(getattr(scorer, "model", None), "config", None)
    return getattr(config, "_commit_hash", None)


def _task_results(
    configs: list[str],
    points: list[Datapoint],
    records: dict[tuple[str, str], dict[str, Any]],
    probabilistic: bool,
) -> dict[str, Any]:
    """Metrics per task over the run's datapoints, in dataset order."""
    return {
        config: task_metrics(
            [records[(p.task, p.id)] for p in points if p.task == config], probabilistic
        )
        for config in configs
    }
