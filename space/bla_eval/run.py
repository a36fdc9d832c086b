"""One evaluation run: load items and model, score what is not scored yet, write the results.

The run folder (``bla_eval.runs.RunFolder``) is locked while a run writes it; ``run.json``
records the settings that decide the scores (a resume must match them); ``results.json`` is
computed from the final ``scores.jsonl`` of the same run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bla_metric import formulas

from . import __version__
from .api.cache import CACHE_FOLDER
from .api.settings import api_settings
from .benchmarks import TEXT_SIMILARITIES, Benchmark, get_benchmark, load_items
from .conditions import RESAMPLES, SEED, Conditions, results_fields, sweep_queries
from .config import RunConfig, check_kind_reads
from .controls import control_items
from .data import content_hash
from .distributed import Processes
from .items import Item, as_record_value
from .outputs import read_json
from .protocols import ProtocolPlan, get_protocol, get_template
from .protocols.in_context import kind_template_fields
from .provenance import provenance
from .runs import SCORES_FILE, RunFolder
from .runs.kept import Asked
from .runs.settings import resume_settings
from .scorers import LoadOptions, ResolvedModel, Scorer, load_scorer, resolve, scorer_class
from .scoring import Progress, engine_call, prepared_image, score_items, zero_shot_queries


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
    folder: RunFolder
    bench: Benchmark
    data: str
    tasks: list[str]
    items: list[Item]
    model: ResolvedModel
    plan: ProtocolPlan | None
    procs: Processes
    clock: dict[str, float] = field(default_factory=dict)
    twins: dict[tuple[str, str], Item] | None = None
    """(task, id) -> the item's control twin (``--control``; None without one)."""
    recorded: dict[str, Any] | None = None
    """A resumed run's ``results.json`` as it was, when it agreed with its scores: kept as the
    run's record (timings, model revision, provenance) when nothing is left to score."""
    regions: Any = None
    """Where the region features come from (``--regions``: ``bla_eval.regions.source``)."""

    @property
    def out(self) -> Path:
        return self.folder.path

    @property
    def selected(self) -> set[tuple[str, str]]:
        """(task, id) of every datapoint the run scores."""
        return {(i.task, i.id) for i in self.items}

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
    folder = run.folder
    lock = folder.lock() if run.procs.main else nullcontext()
    with folder.created(), lock:
        settings, refusal = {}, None
        if run.procs.main:
            try:
                settings = resume_settings(
                    config,
                    run.kind,
                    run.data,
                    run.tasks,
                    run.model,
                    _record(run.regions),
                    content_hash(run.data),
                )
                folder.remove_stale()  # temporary files of a killed run
                folder.check_parts()  # a part file the marker does not list is refused
                folder.check_resume(settings, config.resume, config.overwrite)
                if config.resume:  # every kept record, against the dataset, before any change
                    asked = Asked(config.prompts, config.control, run.twins or {})
                    folder.check_scored(run.tasks, run.items, asked)
                    run.recorded = _recorded(folder)
            except Exception as err:  # noqa: BLE001  (raised below, on every process)
                refusal = err
        run.procs.agree(refusal)  # the other processes stop too, instead of waiting
        run.procs.prepare(folder, config.resume)  # fold or clear the parts of processes
        if run.procs.main:
            folder.start(settings, run.procs.world)  # only now is anything of the folder changed
        run.procs.barrier()
        try:
            return _evaluate(run, progress)
        except KeyboardInterrupt:  # the message says how to keep the work scored so far
            raise KeyboardInterrupt(
                f"the datapoints scored so far are kept in {folder.path}: rerun the same command "
                "with --resume to continue"
            ) from None


def _recorded(folder: RunFolder) -> dict[str, Any] | None:
    """The folder's ``results.json`` when it follows from its scores (None when there is none
    or it disagrees: it is then computed again)."""
    try:
        return RunFolder.open(folder.path).results
    except (OSError, ValueError):
        return None


ALPHA_DATAPOINTS = 100
"""Learning-split datapoints per task that ``caption-pmi``'s alpha is chosen on."""


def _prepare(config: RunConfig) -> _Run:
    """Everything a run checks before it writes: output path, benchmark, data, tasks, items,
    protocol plan and model kind (each error names the bad value)."""
    clock = {"start": time.perf_counter()}
    procs = Processes.from_env()  # a bad launcher variable is named first
    folder = RunFolder(config.output_dir)
    folder.check_output()  # new, empty or a run folder of bla-eval
    bench = get_benchmark(config.benchmark)
    data = bench.data_or_default(config.data)
    tasks = [bench.resolve_task(t) for t in (config.tasks or bench.task_names())]
    protocol = get_protocol(config.protocol)
    tasks = protocol.run_tasks(bench.name, tasks, bool(config.tasks))
    items = load_items(bench, data, tasks, config.split, config.limit)
    _check_one_image_per_datapoint(config, bench.name, items)
    plan = protocol.plan_run(
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
    protocol.check_kind(model.kind)
    check_kind_reads(config, scorer_class(model.kind))  # an option the kind does not read
    api = api_settings(config)
    if api is not None:
        api.api_key()  # a malformed key is named before the folder is made
    text_only = (api is not None and api.text_only) or not scorer_class(
        model.kind
    ).needs_images_for(model)
    if config.control is not None and text_only:
        raise ValueError(
            f"--control {config.control}: model kind {model.kind!r} is shown no image, so a "
            "control image changes none of its scores (an image gain of 0 by construction); "
            "run it without --control"
        )
    regions = open_run_regions(config, model.kind)
    twins = None
    if config.control is not None:  # drawn over every item of the run, resumed or not
        made = control_items(items, config.control, config.control_seed)
        twins = {(i.task, i.id): twin for i, twin in zip(items, made, strict=True)}
    return _Run(
        config, folder, bench, data, tasks, items, model, plan, procs, clock, twins, regions=regions
    )


def open_run_regions(config: RunConfig, kind: str) -> Any:
    """The run's region source (``--regions``) for a kind that reads regions (a kind that reads
    them without one is refused in one line; ``--regions`` for a kind that does not is refused
    with the other options a kind does not read: ``config.check_kind_reads``)."""
    if config.regions is None:
        if scorer_class(kind).takes_regions:
            raise ValueError(
                f"model kind {kind!r} reads region features: pass --regions (a .tsv file in "
                "the authors' layout, a region store, or the detector's folder or Hub id)"
            )
        return None
    from .regions.source import open_regions

    return open_regions(config.regions)


def _record(regions: Any) -> dict[str, Any] | None:
    return None if regions is None else regions.record()


def _check_one_image_per_datapoint(config: RunConfig, benchmark: str, items: list[Item]) -> None:
    """A control or a sweep is summarised on each datapoint's ranked sentences against one image:
    a benchmark whose datapoints show several images (Winoground) is refused, naming it."""
    if config.control is None and not config.prompts:
        return
    several = next((item for item in items if len(item.images) > 1), None)
    if several is not None:
        option = "--control" if config.control is not None else "--prompts"
        raise ValueError(
            f"{option}: the datapoints of {benchmark} show {len(several.images)} images each; "
            "image gains and template sensitivity are measured on datapoints of one image"
        )


def _evaluate(run: _Run, progress: Progress | None) -> dict[str, Any]:
    config, clock = run.config, run.clock
    scorer = _score(run, progress)
    clock["scored"] = time.perf_counter()
    # the main process merges the parts of a multi-process run; the others return its results
    clock["pending"] = run.procs.gather(
        run.folder, run.items, config.images_per_batch, clock["pending"]
    )
    if not run.procs.main:
        run.procs.finish()
        return run.folder.read_results()
    if run.recorded is not None and clock["pending"] == 0:  # a finished run resumed: a no-op
        run.folder.write_results(run.recorded)
        run.procs.finish()
        return run.recorded

    by_task = run.folder.records(run.tasks, run.selected)
    records = [r for task in run.tasks for r in by_task[task]]
    probabilistic = _probabilistic(run)
    results = {
        "benchmark": run.bench.name,
        "model": config.model,
        "model_revision": _model_revision(scorer),
        "kind": run.kind,
        "dataset": run.data,
        "dataset_revision": _dataset_revision(run.data),
        "split": config.split,
        "protocol": _protocol(run, scorer),
        "score": score_record(config, scorer, _score_name(run)),
        "tasks": _task_results(run.bench, run.tasks, run.items, records, probabilistic),
        **_condition_results(run, records, probabilistic),
        "timings": _timings(clock, run.items),
        "scores_file": SCORES_FILE,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "bla_eval_version": __version__,
    }
    if config.name:
        results["display_name"] = config.name
    intervals = _intervals(run.bench, run.tasks, run.items, records, probabilistic)
    if intervals is not None:
        results["confidence_intervals"] = intervals
    results["provenance"] = provenance(
        run.model, scorer, config.device, config.dtype, results["model_revision"]
    )
    run.folder.write_results(results)
    run.procs.finish()  # the other processes may read results.json now
    return results


def _score(run: _Run, progress: Progress | None) -> Scorer | None:
    """Load the model when items are left to score, score them into ``scores.jsonl`` (or, in
    a multi-process run, this process's share into its part)."""
    config, procs = run.config, run.procs
    store = run.folder.score_store(config.resume, procs.part)
    run.clock["resumed"] = len(store.records)
    pending = procs.pending(run.items, store.done, run.folder, config.resume)
    scorer = None
    try:
        if pending:
            if progress is not None:
                progress(0, len(pending), f"loading {run.kind} model")
            options = config.settings_for(
                LoadOptions,
                device=procs.device(config.device),
                api=api_settings(config, run.out / CACHE_FOLDER),
                regions=run.regions,
            )
            scorer = load_scorer(run.model, batch_size=config.batch_size, options=options)
            if config.score == "caption-pmi" and config.pmi_alpha is None:
                choose_pmi_alpha(scorer, run.bench, run.data, run.tasks, config.limit)
        run.clock["model"] = time.perf_counter()
        if scorer is not None:

            def write(item: Item, scores, answers, fields, terms=None) -> None:
                extra = {**(_parsed(config, answers) or {}), **(terms or {})}
                fields = {**_text_similarities(run.bench, scorer, item), **(fields or {})}
                store.add(item, scores, answers, extra or None, fields or None)

            conditions = Conditions(config.prompts, run.twins, config.control, write)

            def on_scored(item: Item, scores: list[list[float]], answers, terms) -> None:
                check_finite(config.model, item, scores)
                conditions.on_scored(item, scores, answers, terms)

            queries = run.plan.queries if run.plan is not None else zero_shot_queries
            if config.prompts:
                queries = sweep_queries(queries, config.prompts)
            # the batches of this process's whole share: a resumed run scores as an
            # uninterrupted one (each batch that holds a pending item scored whole)
            share = conditions.items(procs.shard(run.items))
            score_items(
                scorer,
                share,
                on_scored,
                config.images_per_batch,
                progress,
                queries,
                pending=conditions.items(pending),
                kept=_kept_scores(store) if not config.prompts and not run.twins else None,
            )
    finally:
        store.close()
    run.clock["pending"] = len(pending)
    return scorer


def _kept_scores(store: Any) -> Callable[[Item], list[list[float]] | None]:
    """The scores a resumed run keeps for an item, ``[image][query]`` (a run of one condition:
    its records hold the scorer's scores as they are)."""

    def scores(item: Item) -> list[list[float]] | None:
        record = store.records.get((item.task, item.id))
        if record is None:
            return None
        return [record["scores"]] if len(item.images) == 1 else record["scores"]

    return scores


def choose_pmi_alpha(
    scorer: Scorer, bench: Any, data: str, tasks: Sequence[str], limit: int | None = None
) -> None:
    """Choose ``--score caption-pmi``'s alpha on the learning split of the run's tasks (their
    ``<task>_learning`` validation datapoints, at most ``ALPHA_DATAPOINTS`` per task, and at
    most the run's ``limit``: never more than the run scores; never the scored split), give it
    to the scorer and say on which datapoints it was chosen."""
    from .cli_common import say

    per_task = ALPHA_DATAPOINTS if limit is None else min(ALPHA_DATAPOINTS, limit)
    from bla_metric.likelihood import choose_alpha
    from bla_metric.tasks import get_task

    cond, prior, labels, used = [], [], [], []
    for task in tasks:
        learning = getattr(get_task(task), "learning_config", None) if bench.name == "bla" else None
        if learning is None:
            raise ValueError(
                f"--score caption-pmi: task {task!r} of {bench.name} has no learning split to "
                "choose alpha on; give --pmi-alpha"
            )
        items = bench.read_items(data, learning, "validation", per_task)
        images = [prepared_image(scorer, item, item.images[0]) for item in items]
        with engine_call():
            found = scorer.caption_terms(images, [list(item.captions) for item in items])
        cond += [[c["log_p_image"] for c in row] for row in found]
        prior += [[c["log_p_prior"] for c in row] for row in found]
        labels += [list(item.labels[0]) for item in items]
        used.append(f"{learning}/validation ({len(items)})")
    alpha, accuracy = choose_alpha(cond, prior, labels)
    scorer.alpha = alpha
    bound = f", at most --limit {limit} per task" if limit is not None else ""
    scorer.alpha_source = (
        f"chosen on {', '.join(used)} by sentence accuracy ({100 * accuracy:.1f}%){bound}"
    )
    say(f"caption-pmi: alpha {alpha:g} {scorer.alpha_source}")


def _score_name(run: _Run) -> str:
    """What the run's scores are, by its kind (``Scorer.score_name``)."""
    config = run.config
    prompted = config.prompt is not None or bool(config.prompts)
    return scorer_class(run.kind).score_name(run.model, config.score, config.similarity, prompted)


def score_record(config: RunConfig, scorer: Scorer | None, name: str) -> dict[str, Any]:
    """``results.json``'s ``score``: what the scores are (``name``: by the kind, e.g. cosine,
    match probability, mean log-probability, yes-no, caption) and, for caption-pmi, its alpha
    and where the alpha came from (every printed table names them). ``protocol.score`` keeps
    the ``--score`` asked, which readers group likelihood runs by."""
    record: dict[str, Any] = {"name": name}
    if config.score == "caption-pmi":
        record["alpha"] = getattr(scorer, "alpha", config.pmi_alpha)
        given = "given (--pmi-alpha)" if config.pmi_alpha is not None else None
        record["alpha_source"] = getattr(scorer, "alpha_source", None) or given
    return record


def _text_similarities(bench: Benchmark, scorer: Scorer, item: Item) -> dict[str, Any]:
    """The record field of the item's captions' similarities to each other, for a benchmark
    whose spec asks for them, from a kind that gives them (``Scorer.text_similarities``); else
    nothing (the records of every other benchmark and kind are unchanged)."""
    if not bench.text_similarities:
        return {}
    found = scorer.text_similarities(item.captions)
    return {} if found is None else {TEXT_SIMILARITIES: found}


def _parsed(config: RunConfig, answers: Any) -> dict[str, Any] | None:
    """Protocols that parse generated answers record each one's class beside its raw text."""
    return get_protocol(config.protocol).parsed(answers)


def check_finite(model: str, item: Item, scores: list[list[float]]) -> None:
    """A NaN or infinite score names the model as the cause (it is never written)."""
    bad = [s for row in scores for s in row if not math.isfinite(s)]
    if bad:
        raise ValueError(
            f"model {model!r} produced a non-finite score ({bad[0]}) for {item.task} item "
            f"{item.id}: check its weights and --dtype"
        )


def _probabilistic(run: _Run) -> bool:
    """Whether the run's scores are probabilities (binary view: threshold 0.5): P(yes) of a
    yes/no question (``--score yes-no``) of a kind whose scores of the model are probabilities
    when asked as this run asks (``Scorer.probabilistic_for``)."""
    config = run.config
    prompted = config.prompt is not None or bool(config.prompts)
    return config.score == "yes-no" and scorer_class(run.kind).probabilistic_for(
        run.model, prompted
    )


def _protocol(run: _Run, scorer: Scorer | None) -> dict[str, Any]:
    config = run.config
    probabilistic = _probabilistic(run)
    record: dict[str, Any] = {"name": config.protocol}
    if run.plan is not None:  # the in-context template, demonstration rule, order, DD skips
        chat = bool(getattr(scorer, "chat", False))
        record = run.plan.record(chat)
    own = getattr(scorer, "kind_template", None)  # a kind's own default, not the protocol's
    if own is not None and config.prompt is None:
        record.pop("question", None)
        record.update(kind_template_fields(own, get_protocol(config.protocol).in_context))
    if config.prompt is not None:
        record["template"] = config.prompt
    if config.prompts:
        record["templates"] = {t: get_template(t).question for t in config.prompts}
    if config.control is not None:
        record["control"] = {"kind": config.control, "seed": config.control_seed}
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


def _condition_results(run: _Run, records: list[dict[str, Any]], probabilistic: bool) -> dict:
    """Per-template metrics and sensitivity of a sweep, control metrics and image gain."""
    by_key = {(r["task"], r["id"]): r for r in records}
    by_task = {t: [by_key[(i.task, i.id)] for i in run.items if i.task == t] for t in run.tasks}
    metric = run.bench.headline.get("ranking", "sentence_accuracy")
    return results_fields(run.bench.summarise, by_task, probabilistic, metric)


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


CI_RESAMPLES, CI_SEED = RESAMPLES, SEED
"""Bootstrap resamples and seed of ``confidence_intervals``: those of the sensitivity and image
gain (``bla_eval.conditions``), so the same datapoints are drawn for both."""


def _intervals(
    bench: Benchmark,
    tasks: list[str],
    items: list[Item],
    records: list[dict[str, Any]],
    probabilistic: bool,
) -> dict[str, Any] | None:
    """``results.json``'s ``confidence_intervals``: per task and view, the 95% interval of each
    table metric (:data:`bla_metric.formulas.INTERVAL_METHOD`; None for a benchmark without
    them)."""
    if bench.intervals is None:
        return None
    by_key = {(r["task"], r["id"]): r for r in records}
    per_task = {
        task: bench.intervals(
            [by_key[(i.task, i.id)] for i in items if i.task == task],
            probabilistic,
            CI_RESAMPLES,
            CI_SEED,
        )
        for task in tasks
    }
    return {
        "level": 0.95,
        "method": formulas.INTERVAL_METHOD,
        "resamples": CI_RESAMPLES,
        "seed": CI_SEED,
        "tasks": per_task,
    }


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
            [_with_truth(by_key[(i.task, i.id)], i) for i in items if i.task == task],
            probabilistic,
        )
        for task in tasks
    }


def _with_truth(record: dict[str, Any], item: Item) -> dict[str, Any]:
    """A record with the labels and caption types of the dataset's item (never the run
    folder's: kept records were checked to agree, this makes the results follow the data)."""
    return {
        **record,
        "labels": as_record_value(item.labels),
        "caption_types": list(item.caption_types),
    }
