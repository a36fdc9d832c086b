"""``bla-eval export RUN_DIR``: a run's results in the Hub's formats, for the model's repo.

``RUN_DIR`` is a ``bla-eval`` run folder, or an inspect-ai log of a BLA task (``.eval`` or
``.json``) or a folder of such logs (``inspect_log.py``); each entry's notes start with the
framework that produced the value (``bla-eval <version>`` or ``inspect-ai <version>``).

- ``--format eval-results`` (default): ``.eval_results/bla.yaml``, one entry per task of the
  dataset's ``eval.yaml`` (``builders/hub_eval.py`` writes that file): dataset id and revision,
  task id (the config name), value (what that task computes: the yes/no answer accuracy per
  sentence, a proportion in [0, 1], ``harnesses/answer_match.py``; a run without generated
  answers is refused), date, source, and notes with the protocol, n, the value's bootstrap 95%
  interval, BLA's headline (ranking sentence accuracy) with its interval, and where the
  per-datapoint scores are (``--scores``, ``hub_scores.py``). A partial run (``--limit``) is
  refused unless ``--allow-partial``, which the notes then say. Serialised with huggingface_hub's
  own ``eval_result_entries_to_yaml``. Beside it, for a run folder, the run's Every Eval Ever
  record (``eee_record.py``: each task's value and headline with standard error, interval,
  n and resamples); with ``--repo-id`` the entries' ``source.url`` links it in the model repo.
- ``--format model-index``: the older ``model-index`` block of a model card's YAML header, from
  huggingface_hub's ``EvalResult`` / ``eval_results_to_model_index``: each metric is named
  there, so it carries BLA's headline (ranking sentence accuracy, %).
- ``--push --repo-id ORG/MODEL`` opens a pull request on the model repo (``HfApi.create_commit``
  with ``create_pr=True``, the record committed with ``bla.yaml``, or ``metadata_update`` for
  the model card); ``--dry-run`` prints that exact call instead of running it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bla_metric import formulas
from bla_metric.stats import significance, uncertainty

from ..benchmarks import Benchmark, get_benchmark
from ..harnesses import answer_match
from ..hub_auth import require_token
from ..outputs import check_file_replaceable, file_mark, write_marked_text, write_texts_atomic
from ..runs import protocol_name
from . import eee_record
from .eee_record import Estimate, Measured
from .inspect_log import FRAMEWORK, is_log_folder, log_files, log_result
from .log_schema import iso_date
from .rundata import Run, load_run

FORMATS = ("eval-results", "model-index")
EVAL_RESULTS_DIR = ".eval_results"
EVAL_RESULTS_FILE = "bla.yaml"
MODEL_INDEX_FILE = "model-index.yaml"
PUSH_COMMAND = "bla-eval export --push"
EXPORT_COMMAND = "bla-eval export"
"""The command named in the first line of the files it writes (it replaces only those)."""
COMMIT_MESSAGE = "Add BLA evaluation results"


def benchmark_of(results: dict[str, Any]) -> Benchmark:
    """The spec of the run's benchmark (runs without the field are BLA runs)."""
    return get_benchmark(str(results.get("benchmark") or "bla"))


def headline(results: dict[str, Any]) -> tuple[str, str]:
    """(view, metric) of the value exported per task: the spec's main view and its headline."""
    spec = benchmark_of(results)
    return spec.main_view, spec.headline[spec.main_view]


def dataset_id(results: dict[str, Any], override: str | None = None) -> str:
    """The Hub dataset id the results belong to: ``override``, else the run's dataset when it is
    a Hub id, else the benchmark's published dataset."""
    if override:
        return override
    data = str(results.get("dataset") or "")
    looks_like_hub = data.count("/") == 1 and not data.startswith((".", "/", "~"))
    if looks_like_hub and not Path(data).exists():
        return data
    return benchmark_of(results).hub_id


def partial_reason(results: dict[str, Any]) -> str | None:
    """Why the run scored only part of the benchmark (``--limit`` cut a task short), or None."""
    protocol = results.get("protocol")
    limit = protocol.get("limit") if isinstance(protocol, dict) else None
    if limit is None:
        return None
    short = [t for t, v in results["tasks"].items() if v.get("n") is not None and v["n"] >= limit]
    return f"--limit {limit} cut {', '.join(short)}" if short else None


def check_whole(what: str, reason: str | None, allow_partial: bool) -> str | None:
    """The note of a partial run exported with ``--allow-partial``; a ValueError without it."""
    if reason is None:
        return None
    if not allow_partial:
        raise ValueError(
            f"{what} is a partial run ({reason}): the Hub ranks whole runs; export it anyway "
            "with --allow-partial"
        )
    return f"PARTIAL RUN exported with --allow-partial: {reason}"


def protocol_notes(results: dict[str, Any], task: str) -> str:
    """One line describing how the value was obtained."""
    protocol = results.get("protocol")
    protocol = protocol if isinstance(protocol, dict) else {}
    parts = [
        f"bla-eval {results.get('bla_eval_version', '')}".strip(),
        f"protocol {protocol_name(results)}",
        f"kind {results.get('kind')}",
        f"split {results.get('split', 'test')}",
        f"n {results['tasks'][task].get('n')} datapoints",
    ]
    if protocol.get("score"):
        parts.append(f"score {protocol['score']}")
    return "; ".join(parts)


def headline_value(results: dict[str, Any], task: str) -> float:
    """The task's headline metric in percent, rounded to 2 decimals (model-index)."""
    view, metric = headline(results)
    try:
        return round(100 * float(results["tasks"][task][view][metric]), 2)
    except (KeyError, TypeError):
        raise ValueError(f"results.json has no {view} {metric} for {task}") from None


def answers_of(run: Run, task: str) -> tuple[list, list]:
    """(answers, labels) of the task's datapoints; a ValueError for a run without answers."""
    records = run.records[task]
    if not records or not all(isinstance(r.get("answers"), list) for r in records):
        kind = run.results.get("kind")
        raise ValueError(
            f"{run.path}: the Hub's task ids rank the accuracy of generated yes/no answers "
            f"(eval.yaml), and this run of kind {kind} generated none: export it with --format "
            "model-index (and publish its scores with --scores), or rerun a model that answers "
            "(e.g. --protocol paper)"
        )
    return [r["answers"] for r in records], [r["labels"] for r in records]


INTERVAL_METHOD = "percentile bootstrap over datapoints ({resamples} resamples, seed 0)"
"""How the exported values' 95% intervals are computed (the notes' and the record's)."""


def answer_estimate(run: Run, task: str) -> Estimate:
    """The exported value of ``task`` (yes/no answer accuracy per sentence) with its 95%
    interval (:func:`answer_match.answer_interval`) and standard error."""
    answers, labels = answers_of(run, task)
    hits = answer_match.sentence_matches(answers, labels)
    interval = answer_match.answer_interval(answers, labels)
    return Estimate(
        value=answer_match.answer_accuracy(answers, labels),
        interval=None if formulas.no_variation(interval) else interval,
        interval_method=INTERVAL_METHOD.format(resamples=answer_match.RESAMPLES),
        standard_error=uncertainty.ratio_standard_error(
            [sum(row) for row in hits], [len(row) for row in hits]
        ),
        standard_error_method=uncertainty.METHOD,
        n=len(hits),
        resamples=answer_match.RESAMPLES,
    )


def headline_estimate(run: Run, task: str) -> Estimate:
    """BLA's headline of ``task`` (the spec's main view and metric) with its 95% interval (the
    run's own from ``results.json``, the one every table gives, else the bootstrap of
    :func:`bla_metric.formulas.compute`, seed 0) and standard error (for a metric that is a
    ratio of per-datapoint sums: sentence accuracy, or a share of datapoints)."""
    from ..report import run_interval

    view, metric = headline(run.results)
    records = run.records[task]
    scores, labels = [r["scores"] for r in records], [r["labels"] for r in records]
    found = formulas.compute(scores, labels, view, bootstrap=answer_match.RESAMPLES, seed=0)
    stats = significance.datapoint_stats(scores, labels, view)
    if metric == "sentence_accuracy":
        se = uncertainty.ratio_standard_error(stats["correct"], stats["sentences"])
    elif metric in stats:
        se = uncertainty.ratio_standard_error(stats[metric], [1.0] * len(records))
    else:
        se = float("nan")
    shares = metric in formulas.SHARES.get(view, ())
    stored = run_interval(run.results, task, view, metric)
    own = run.results.get("confidence_intervals") or {}
    resamples, seed = answer_match.RESAMPLES, 0
    if stored is None:
        span: Any = [float(v) for v in found["ci"][metric]]
    else:
        span, resamples, seed = stored, int(own.get("resamples", 0)), int(own.get("seed", 0))
    bootstrap = f"percentile bootstrap over datapoints ({resamples} resamples, seed {seed})"
    kept = isinstance(span, list) and not formulas.no_variation(span)
    return Estimate(
        value=float(found[metric]),
        interval=(float(span[0]), float(span[1])) if kept else None,
        interval_method="Clopper-Pearson (exact binomial)" if shares else bootstrap,
        standard_error=se,
        standard_error_method=uncertainty.METHOD,
        n=len(records),
        resamples=0 if shares else resamples,
    )


def _span(estimate: Estimate) -> str:
    """An estimate's interval as the notes write it."""
    if estimate.interval is None:
        return "(no variation)"
    return f"[{estimate.interval[0]:.4f}, {estimate.interval[1]:.4f}]"


Estimates = dict[str, tuple[Estimate, Estimate]]
"""Per task, (:func:`answer_estimate`, :func:`headline_estimate`)."""


def task_estimates(run: Run) -> Estimates:
    """:data:`Estimates` of every task of the run (computed once for the entries and the
    record)."""
    return {t: (answer_estimate(run, t), headline_estimate(run, t)) for t in run.results["tasks"]}


def _estimates_of(run: Run, task: str, estimates: Estimates | None) -> tuple[Estimate, Estimate]:
    """The task's estimates from ``estimates``, else computed."""
    found = (estimates or {}).get(task)
    return found or (answer_estimate(run, task), headline_estimate(run, task))


def entry_notes(
    run: Run,
    task: str,
    partial: str | None,
    scores: str | None,
    record: bool = False,
    estimates: Estimates | None = None,
) -> str:
    """The notes of a run's entry: protocol, n, the value's 95% interval, BLA's headline with
    its interval, where the per-datapoint scores are, the run's Every Eval Ever record (with
    ``record``), and a partial run's mark."""
    answers, _ = answers_of(run, task)
    value, top = _estimates_of(run, task, estimates)
    view, metric = headline(run.results)
    span = _span(value)
    parts = [
        protocol_notes(run.results, task),
        f"95% CI {span} (bootstrap over datapoints)"
        if value.interval is not None
        else "95% CI: no variation over the resamples",
        f"BLA headline {view}.{metric} {top.value:.4f} {_span(top)}",
        f"per-datapoint scores: {scores or 'not published (bla-eval export --scores REPO)'}",
    ]
    if record:
        parts.append(
            f"standard errors and intervals: Every Eval Ever record {EVAL_RESULTS_DIR}/"
            f"{eee_record.RECORD_FILE}"
        )
    return "; ".join(parts + [n for n in (neither_note(answers), partial) if n])


def run_record(
    run: Run,
    dataset: str | None = None,
    source_url: str | None = None,
    partial: str | None = None,
    scores: str | None = None,
    estimates: Estimates | None = None,
) -> dict[str, Any]:
    """The run's Every Eval Ever record (:mod:`.eee_record`): per task the exported value and
    BLA's headline with their uncertainty."""
    from .leaderboard import run_label

    results = run.results
    hub_id = dataset_id(results, dataset)
    label = benchmark_of(results).label
    view, metric = headline(results)
    measured, datasets = [], {}
    for task in results["tasks"]:
        source: dict[str, Any] = {
            "dataset_name": f"{label} ({task})",
            "source_type": "hf_dataset",
            "hf_repo": hub_id,
            "hf_split": str(results.get("split", "test")),
            "additional_details": {"config": task},
        }
        if _revision(results):
            source["additional_details"]["revision"] = str(_revision(results))
        datasets[task] = source
        measured += [
            Measured(
                task,
                f"{task}.answer_accuracy",
                f"{label} {task}",
                "accuracy",
                "Yes/no answer accuracy per sentence",
                f"{label} {task}: the share of sentences whose generated answer begins with "
                "the right yes or no (the dataset's eval.yaml task)",
                _estimates_of(run, task, estimates)[0],
            ),
            Measured(
                task,
                f"{task}.{view}.{metric}",
                f"{label} {task} ({view} {metric.replace('_', ' ')})",
                f"bla.{view}.{metric}",
                f"{metric.replace('_', ' ').capitalize()} ({view} view)",
                f"{label} {task}: the benchmark's headline, {view} view {metric}",
                _estimates_of(run, task, estimates)[1],
            ),
        ]
    details = {"protocol": protocol_notes(results, next(iter(results["tasks"])))}
    for key, value in (
        ("logs", source_url),
        ("per_datapoint_scores", scores),
        ("partial", partial),
    ):
        if value:
            details[key] = value
    return eee_record.build_record(
        results, run_label(run), measured, datasets, details, EXPORT_COMMAND
    )


def neither_note(answers: list) -> str | None:
    """The note on answers that begin with neither yes nor no (a zero-shot generative run's
    greedy first token of a random or off-prompt model, e.g. ``\ufffd``): the Hub's task
    counts them wrong, BLA's binary view compares P(yes) with P(no) only; None when there are
    none."""
    flat = [str(a) for row in answers for a in row]
    neither = [a for a in flat if not answer_match.matches(a, 0) and not answer_match.matches(a, 1)]
    if not neither:
        return None
    return (
        f"{len(neither)} of {len(flat)} answers begin with neither yes nor no (e.g. "
        f"{neither[0][:20]!r}) and count as wrong here, while the run's binary accuracy "
        "compares P(yes) with P(no) only"
    )


def eval_result_entries(
    run: Run,
    dataset: str | None = None,
    source_url: str | None = None,
    source_name: str | None = None,
    partial: str | None = None,
    scores: str | None = None,
    record: bool = False,
    estimates: Estimates | None = None,
) -> list:
    """One ``huggingface_hub.EvalResultEntry`` per task of the run: the value of the dataset's
    ``eval.yaml`` task of that id (yes/no answer accuracy per sentence, in [0, 1]); with
    ``record`` the notes name the run's Every Eval Ever record."""
    from huggingface_hub import EvalResultEntry

    results = run.results
    hub_id = dataset_id(results, dataset)
    entries = []
    for task in results["tasks"]:
        answers, labels = answers_of(run, task)
        entries.append(
            EvalResultEntry(
                dataset_id=hub_id,
                task_id=task,
                value=round(answer_match.answer_accuracy(answers, labels), 4),
                dataset_revision=_revision(results),
                date=iso_date(run.path / "results.json", "created", results.get("created")),
                source_url=source_url,
                source_name=source_name if source_url else None,
                notes=entry_notes(run, task, partial, scores, record, estimates),
            )
        )
    return entries


def _revision(results: dict[str, Any]) -> str | None:
    """A dataset revision only when it is a Hub commit (40 hex digits), not a local version."""
    revision = str(results.get("dataset_revision") or "")
    is_commit = len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)
    return revision if is_commit else None


def eval_results_yaml(
    run: Run,
    dataset: str | None = None,
    source_url: str | None = None,
    source_name: str | None = None,
    partial: str | None = None,
    scores: str | None = None,
    record: bool = False,
    estimates: Estimates | None = None,
) -> str:
    from huggingface_hub import eval_result_entries_to_yaml

    entries = eval_result_entries(
        run, dataset, source_url, source_name, partial, scores, record, estimates
    )
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)


def model_index(run: Run, dataset: str | None = None, source_url: str | None = None) -> list[dict]:
    """The ``model-index`` list of a model card (huggingface_hub's own converter)."""
    from huggingface_hub import EvalResult
    from huggingface_hub.repocard_data import eval_results_to_model_index

    results = run.results
    hub_id = dataset_id(results, dataset)
    label = benchmark_of(results).label
    view, metric = headline(results)
    evals = [
        EvalResult(
            task_type="image-text-to-text",
            task_name=f"{label} {task}",
            dataset_type=hub_id,
            dataset_name=f"{label} ({task})",
            dataset_config=task,
            dataset_split=results.get("split", "test"),
            dataset_revision=_revision(results),
            metric_type=metric,
            metric_name=f"{metric.replace('_', ' ').capitalize()} ({view} view, %)",
            metric_value=headline_value(results, task),
            source_name="bla-eval" if source_url else None,
            source_url=source_url,
        )
        for task in results["tasks"]
    ]
    name = str(results.get("model", "model")).rstrip("/").split("/")[-1]
    return eval_results_to_model_index(name, evals)


def model_index_yaml(run: Run, dataset: str | None = None, source_url: str | None = None) -> str:
    return yaml.safe_dump(
        {"model-index": model_index(run, dataset, source_url)}, sort_keys=False, allow_unicode=True
    )


def pull_request_url(commit: Any) -> str:
    """The URL of the pull request a ``create_pr=True`` commit opened (what the user reviews)."""
    url = getattr(commit, "pr_url", None)
    if not url:
        raise ValueError(f"the Hub made commit {commit.oid} but opened no pull request")
    return url


def check_repo_id(repo_id: str, option: str = "--repo-id") -> str:
    """``repo_id`` when huggingface_hub accepts it as a repo id (the check its own calls
    make, so ``--dry-run`` refuses what the real call refuses); else a ValueError naming
    ``option``."""
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except ValueError as err:
        message = " ".join(str(err).split())
        raise ValueError(f"{option} {repo_id!r} is not a Hub repo id: {message}") from None
    return repo_id


def record_for_push(run_dir: str | Path, fmt: str, written: Path) -> str | None:
    """The Every Eval Ever record :func:`export` wrote beside ``written`` for the run folder
    ``run_dir`` (committed with ``bla.yaml`` by ``--push``), or None (a log, a model-index)."""
    source = Path(run_dir)
    if fmt != "eval-results" or source.is_file() or is_log_folder(source):
        return None
    return (written.parent / eee_record.RECORD_FILE).read_text(encoding="utf-8")


def push_call(fmt: str, repo_id: str, text: str, record: str | None = None) -> tuple[str, Any]:
    """(the exact huggingface_hub call as Python source, a function that performs it and
    returns the URL of the pull request it opens; it takes the token, asked for when None).
    ``record``: the run's Every Eval Ever record, committed beside ``bla.yaml``."""
    check_repo_id(repo_id)
    if fmt == "eval-results":
        files = {f"{EVAL_RESULTS_DIR}/{EVAL_RESULTS_FILE}": text}
        if record is not None:
            files[f"{EVAL_RESULTS_DIR}/{eee_record.RECORD_FILE}"] = record
        listed = ", ".join(
            f"CommitOperationAdd(path_in_repo={name!r}, path_or_fileobj={body.encode()!r})"
            for name, body in files.items()
        )
        source = (
            "from huggingface_hub import CommitOperationAdd, HfApi\n"
            "HfApi().create_commit(\n"
            f"    repo_id={repo_id!r},\n"
            "    repo_type='model',\n"
            f"    operations=[{listed}],\n"
            f"    commit_message={COMMIT_MESSAGE!r},\n"
            "    create_pr=True,\n"
            ")"
        )

        def run(token: str | None = None) -> str:
            from huggingface_hub import CommitOperationAdd, HfApi

            commit = HfApi(token=token or require_token(PUSH_COMMAND)).create_commit(
                repo_id=repo_id,
                repo_type="model",
                operations=[
                    CommitOperationAdd(path_in_repo=name, path_or_fileobj=body.encode())
                    for name, body in files.items()
                ],
                commit_message=COMMIT_MESSAGE,
                create_pr=True,
            )
            return pull_request_url(commit)

        return source, run
    metadata = yaml.safe_load(text)
    source = (
        "from huggingface_hub import metadata_update\n"
        f"metadata_update({repo_id!r}, {metadata!r}, overwrite=True,\n"
        f"                commit_message={COMMIT_MESSAGE!r}, create_pr=True)"
    )

    def run(token: str | None = None) -> str:
        from huggingface_hub import metadata_update

        commit = metadata_update(
            repo_id,
            metadata,
            overwrite=True,
            commit_message=COMMIT_MESSAGE,
            create_pr=True,
            token=token or require_token(PUSH_COMMAND),
        )
        return pull_request_url(commit)

    return source, run


def inspect_results_yaml(
    path: Path, dataset: str | None = None, source_url: str | None = None, allow_partial=False
) -> str:
    """``.eval_results`` entries of inspect logs: one per log, each a different BLA task."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    results = [(log, log_result(log, dataset)) for log in log_files(path)]
    configs = [r.config for _, r in results]
    if len(set(configs)) != len(configs):
        raise ValueError(f"{path} holds more than one log of the same BLA task: give one log")
    entries = []
    for log, r in results:
        partial = check_whole(str(log), r.partial, allow_partial)
        entries.append(
            EvalResultEntry(
                dataset_id=r.dataset_id,
                task_id=r.config,
                value=r.value,
                dataset_revision=r.revision,
                date=r.date,
                source_url=source_url,
                source_name=FRAMEWORK if source_url else None,
                notes="; ".join([r.notes, *([partial] if partial else [])]),
            )
        )
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)


def export(
    run_dir: str | Path,
    fmt: str = "eval-results",
    output: str | Path | None = None,
    dataset: str | None = None,
    source_url: str | None = None,
    allow_partial: bool = False,
    scores: str | None = None,
    repo_id: str | None = None,
) -> tuple[Path, str]:
    """Write the file for the model repo into ``output`` (default: the run folder); returns
    (path written, its text). The file starts with a comment naming this command: an existing
    file without it is never replaced. A partial run is refused unless ``allow_partial``;
    ``scores`` is where the run's per-datapoint scores are published (named in the notes).
    For a run folder's ``eval-results`` the run's Every Eval Ever record is written beside
    (:func:`record_for_push` reads it); with ``repo_id`` (the model repo) the entries'
    ``source.url`` is the record's address there, and ``source_url`` goes into the record."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if dataset is not None:
        check_repo_id(dataset, "--dataset-id")
    source = Path(run_dir)
    if source.is_file() or is_log_folder(source):
        if fmt != "eval-results":
            raise ValueError(f"--format {fmt} is written from a bla-eval run folder, not a log")
        if scores:
            raise ValueError("--scores publishes a bla-eval run folder's scores, not a log's")
        base = Path(output) if output else (source.parent if source.is_file() else source)
        target = base / EVAL_RESULTS_DIR / EVAL_RESULTS_FILE
        path = check_file_replaceable(target, EXPORT_COMMAND, root=base)
        text = inspect_results_yaml(source, dataset, source_url, allow_partial)
        return path, write_marked_text(path, EXPORT_COMMAND, text)
    run = load_run(run_dir)
    base = Path(output) if output else Path(run_dir)
    name = f"{EVAL_RESULTS_DIR}/{EVAL_RESULTS_FILE}" if fmt == "eval-results" else MODEL_INDEX_FILE
    path = check_file_replaceable(base / name, EXPORT_COMMAND, root=base)
    partial = check_whole(str(run.path), partial_reason(run.results), allow_partial)
    if fmt == "eval-results":
        record_path = eee_record.check_record_replaceable(
            path.parent / eee_record.RECORD_FILE, EXPORT_COMMAND
        )
        link = eee_record.record_url(repo_id, EVAL_RESULTS_DIR) if repo_id else source_url
        estimates = task_estimates(run)
        text = eval_results_yaml(
            run, dataset, link, "bla-eval", partial, scores, record=True, estimates=estimates
        )
        record = run_record(run, dataset, source_url, partial, scores, estimates)
        marked = file_mark(EXPORT_COMMAND) + text
        # one output: neither file replaced unless both are written (a full disk)
        write_texts_atomic({path: marked, record_path: eee_record.record_text(record)})
        return path, marked
    text = model_index_yaml(run, dataset, source_url)
    return path, write_marked_text(path, EXPORT_COMMAND, text)
