"""One evaluation run: load items and model, score what is not scored yet, write the results.

The output folder is locked while a run writes it; ``run.json`` records the settings that decide
the scores (a resume must match them); ``results.json`` is computed from the final
``scores.jsonl`` of the same run.
"""

from __future__ import annotations

import math
import shutil
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__, paper_protocol, protocols
from .api.cache import CACHE_FOLDER
from .api.settings import api_settings
from .benchmarks import Benchmark, get_benchmark, load_items
from .config import RunConfig
from .distributed import Processes, part_files
from .items import Item
from .locking import folder_lock
from .results import ScoreStore
from .run_check import check_records
from .run_folder import (
    RESULTS_FILE,
    RUN_FILE,
    SCORES_FILE,
    check_run_output,
    mark_run_folder,
    naming,
    read_json,
    read_numbered,
    remove_stale,
    write_json_atomic,
)
from .scorers import LoadOptions, ResolvedModel, Scorer, load_scorer, resolve, scorer_class
from .scoring import Progress, score_items

RECORDED_LATER = {"benchmark": "bla", "protocol": "zero-shot", "tasks": None, "limit": None}
"""Settings that the ``run.json`` of older runs lacks: the value they had (None: unknown, then
the records of ``scores.jsonl`` are checked against the run's items instead)."""


def resume_settings(
    config: RunConfig, kind: str, data: str, tasks: list[str] | None = None
) -> dict[str, Any]:
    """The settings that decide which datapoints are scored and how: a resumed run must have
    the same (``tasks``: the configs the run scores, as resolved)."""
    similarity = config.similarity if scorer_class(kind).takes_similarity else None
    settings = {
        "model": config.model,
        "gguf_file": config.gguf_file,
        "kind": kind,
        "benchmark": config.benchmark,
        "data": data,
        "split": config.split,
        "tasks": list(tasks if tasks is not None else config.tasks),
        "limit": config.limit,
        "protocol": config.protocol,
        "dtype": config.dtype,
        "similarity": similarity,
    }
    if config.protocol != "zero-shot":
        settings |= {"icl_order": config.icl_order, "icl_seed": config.icl_seed}
    if scorer_class(kind).remote:  # the endpoint and how it is asked
        settings |= api_settings(config).scoring_record()
    return settings


def check_resume(out: Path, settings: dict[str, Any], resume: bool) -> None:
    """Refuse a resume whose settings differ from the interrupted run's, or cannot be compared
    (``run.json`` is written by the caller once every check passed)."""
    path = out / RUN_FILE
    if resume and (out / SCORES_FILE).exists():
        if not path.exists():
            raise ValueError(
                f"cannot resume {out}: it has {SCORES_FILE} but no {RUN_FILE}, so its settings "
                "cannot be checked; run without --resume to start fresh"
            )
        changed = changed_settings(read_json(path), settings)
        if changed:
            detail = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in changed.items())
            raise ValueError(f"cannot resume {out}: the run settings changed ({detail})")


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


def checked_records(run: _Run) -> dict[str, list[dict[str, Any]]]:
    """The records of ``scores.jsonl`` by task, checked to hold only datapoints this run
    selects, each once (an error names the file and line)."""
    path = run.out / SCORES_FILE
    selected = {(i.task, i.id) for i in run.items}
    return check_records(path, read_numbered(path), run.tasks, selected)


def check_scored(run: _Run) -> None:
    """A resumed run's ``scores.jsonl`` holds only datapoints this run selects, each once."""
    try:
        checked_records(run)
    except ValueError as err:
        raise ValueError(
            f"cannot resume {run.out}: {err}; run without --resume to start fresh"
        ) from None


def _dataset_revision(data: str) -> str | None:
    manifest = Path(data) / "manifest.json"
    if manifest.is_file():
        doc = read_json(manifest)
        return doc.get("dataset_version") or doc.get("version")
    return None


@dataclass
class _Run:
    """What one run has decided before it scores: the benchmark, data, tasks, items, the model
    (resolved once), the in-context plan (None for zero-shot), the processes of a launcher, and
    its clock."""

    config: RunConfig
    bench: Benchmark
    data: str
    tasks: list[str]
    items: list[Item]
    model: ResolvedModel
    plan: protocols.ProtocolPlan | None
    procs: Processes
    clock: dict[str, float] = field(default_factory=dict)

    @property
    def out(self) -> Path:
        return self.config.output_dir

    @property
    def kind(self) -> str:
        return self.model.kind


def evaluate(config: RunConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Score ``config.model`` on ``config.benchmark``; write ``results.json`` and
    ``scores.jsonl`` into ``config.output_dir`` and return the results document.

    Data, tasks and model kind are checked before anything is written; a run that fails before
    its first score leaves no folder it created behind. Under ``torchrun`` / ``accelerate
    launch`` each process scores its share of the images and the main process gathers them.
    ``progress(done, total, desc)`` is called after each batch of images.
    """
    run = _prepare(config)
    lock = folder_lock(run.out) if run.procs.main else nullcontext()
    with _output_folder(run.out), lock:
        settings = resume_settings(config, run.kind, run.data, run.tasks)
        if run.procs.main:
            remove_stale(run.out)  # temporary files of a killed run
            check_resume(run.out, settings, config.resume)
        run.procs.prepare(run.out, config.resume)  # fold or clear the parts of processes
        if run.procs.main:
            if config.resume:
                check_scored(run)
            # checked: only now is anything of the folder changed
            mark_run_folder(run.out)
            write_json_atomic(run.out / RUN_FILE, settings)
            (run.out / RESULTS_FILE).unlink(missing_ok=True)  # written again from the scores
        run.procs.barrier()
        return _evaluate(run, progress)


def _prepare(config: RunConfig) -> _Run:
    """Everything a run checks before it writes: output path, benchmark, data, tasks, items,
    protocol plan and model kind (each error names the bad value)."""
    clock = {"start": time.perf_counter()}
    check_run_output(config.output_dir)  # new, empty or a run folder of bla-eval
    bench = get_benchmark(config.benchmark)
    data = bench.data_or_default(config.data)
    tasks = [bench.resolve_task(t) for t in (config.tasks or bench.task_names())]
    tasks = protocols.run_tasks(config.protocol, bench.name, tasks, bool(config.tasks))
    items = load_items(bench, data, tasks, config.split, config.limit)
    plan = protocols.plan_run(
        config.protocol,
        items,
        lambda c: bench.read_items(data, c, "test", None),
        config.icl_order,
        config.icl_seed,
    )
    if plan is not None:  # in-context items without demonstrations (DD) are skipped, recorded
        items = [i for i in items if plan.covers(i)]
    clock["data"] = time.perf_counter()
    model = resolve(
        config.model, config.kind, config.trust_remote_code, config.endpoint, config.gguf_file
    )  # an unknown or unfit --kind is named before the folder is made
    protocols.check_kind(config.protocol, model.kind)
    return _Run(config, bench, data, tasks, items, model, plan, Processes.from_env(), clock)


@contextmanager
def _output_folder(out: Path):
    """Create ``out`` if needed; when this run created it and fails before any score was written,
    remove what it wrote there (its run.json and empty score files) and the folder."""
    created = not out.exists()
    with naming(out):
        out.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        written = [out / SCORES_FILE, *part_files(out)]
        if created and not any(p.exists() and p.stat().st_size > 0 for p in written):
            shutil.rmtree(out, ignore_errors=True)
        raise


def _evaluate(run: _Run, progress: Progress | None) -> dict[str, Any]:
    config, clock = run.config, run.clock
    scorer = _score(run, progress)
    clock["scored"] = time.perf_counter()
    # the main process merges the parts of a multi-process run; the others return its results
    clock["pending"] = run.procs.gather(
        run.out, run.items, config.images_per_batch, clock["pending"]
    )
    if not run.procs.main:
        run.procs.finish()
        return read_json(run.out / RESULTS_FILE)

    by_task = checked_records(run)
    records = [r for task in run.tasks for r in by_task[task]]
    probabilistic = scorer_class(run.kind).probabilistic
    results = {
        "benchmark": run.bench.name,
        "model": config.model,
        "model_revision": _model_revision(scorer),
        "kind": run.kind,
        "dataset": run.data,
        "dataset_revision": _dataset_revision(run.data),
        "split": config.split,
        "protocol": _protocol(run, scorer),
        "tasks": _task_results(run.bench, run.tasks, run.items, records, probabilistic),
        "timings": _timings(clock, run.items),
        "scores_file": SCORES_FILE,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "bla_eval_version": __version__,
    }
    write_json_atomic(run.out / RESULTS_FILE, results)
    run.procs.finish()  # the other processes may read results.json now
    return results


def _score(run: _Run, progress: Progress | None) -> Scorer | None:
    """Load the model when items are left to score, score them into ``scores.jsonl`` (or, in
    a multi-process run, this process's share into its part)."""
    config, procs = run.config, run.procs
    store = ScoreStore(procs.scores_path(run.out), config.resume)
    run.clock["resumed"] = len(store.records)
    pending = procs.pending(run.items, store.done, run.out, config.resume)
    scorer = None
    try:
        if pending:
            if progress is not None:
                progress(0, len(pending), f"loading {run.kind} model")
            options = LoadOptions(
                procs.device(config.device),
                config.dtype,
                config.trust_remote_code,
                config.similarity,
                device_map=config.device_map,
                protocol=config.protocol,
                api=api_settings(config, run.out / CACHE_FOLDER),
            )
            scorer = load_scorer(run.model, batch_size=config.batch_size, options=options)
        run.clock["model"] = time.perf_counter()
        if scorer is not None:

            def on_scored(item: Item, scores: list[list[float]], answers) -> None:
                check_finite(config.model, item, scores)
                store.add(item, scores, answers, _parsed(config, answers))

            queries = {"queries": run.plan.queries} if run.plan is not None else {}
            score_items(scorer, pending, on_scored, config.images_per_batch, progress, **queries)
    finally:
        store.close()
    run.clock["pending"] = len(pending)
    return scorer


def _parsed(config: RunConfig, answers: Any) -> dict[str, Any] | None:
    """The authors' protocols record each generated answer's class beside its raw text."""
    if answers is None or not paper_protocol.is_paper(config.protocol):
        return None
    return {"parsed": paper_protocol.parsed(answers)}


def check_finite(model: str, item: Item, scores: list[list[float]]) -> None:
    """A NaN or infinite score names the model as the cause (it is never written)."""
    bad = [s for row in scores for s in row if not math.isfinite(s)]
    if bad:
        raise ValueError(
            f"model {model!r} produced a non-finite score ({bad[0]}) for {item.task} item "
            f"{item.id}: check its weights and --dtype"
        )


def _protocol(run: _Run, scorer: Scorer | None) -> dict[str, Any]:
    config = run.config
    probabilistic = scorer_class(run.kind).probabilistic
    record: dict[str, Any] = {"name": config.protocol}
    if run.plan is not None:  # the in-context template, demonstration rule, order, DD skips
        chat = bool(getattr(scorer, "chat", False))
        record = protocols.protocol_record(
            run.plan.protocol, run.plan.order, run.plan.seed, chat=chat, plan_=run.plan
        )
    return {
        "tasks": run.tasks,
        "limit": config.limit,
        "batch_size": scorer.batch_size if scorer is not None else config.batch_size,
        "device": str(getattr(scorer, "device", config.device)),
        "dtype": config.dtype,
        "binary_view": "threshold 0.5" if probabilistic else "top-k",
        **(scorer.describe() if scorer is not None else {}),
        **record,
    }


def _timings(clock: dict, items: list[Item]) -> dict[str, Any]:
    return {
        "load_data_s": round(clock["data"] - clock["start"], 3),
        "load_model_s": round(clock["model"] - clock["data"], 3),
        "scoring_s": round(clock["scored"] - clock["model"], 3),
        "total_s": round(time.perf_counter() - clock["start"], 3),
        "datapoints_scored": clock["pending"],
        "datapoints_resumed": len(items) - clock["pending"],
    }


def _model_revision(scorer: Scorer | None) -> str | None:
    """The Hub commit the weights came from, when transformers recorded one."""
    config = getattr(getattr(scorer, "model", None), "config", None)
    return getattr(config, "_commit_hash", None)


def _task_results(
    bench: Benchmark,
    tasks: list[str],
    items: list[Item],
    records: list[dict[str, Any]],
    probabilistic: bool,
) -> dict[str, Any]:
    """Metrics per task over the run's items (in dataset order), from the final scores file."""
    by_key = {(r["task"], r["id"]): r for r in records}
    missing = [f"{i.task}/{i.id}" for i in items if (i.task, i.id) not in by_key]
    if missing:
        raise ValueError(
            f"{SCORES_FILE} lacks {len(missing)} item(s) of this run (first: {missing[0]}); "
            "was it edited while the run wrote it?"
        )
    return {
        task: bench.summarise(
            [by_key[(i.task, i.id)] for i in items if i.task == task], probabilistic
        )
        for task in tasks
    }
