"""BLA itself as a benchmark spec: tasks from ``bla_metric.tasks``, metrics from ``bla_metric``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import formulas, hub_ids, paper, references
from bla_metric.schema import BENCHMARK_ROWS
from bla_metric.stats import significance
from bla_metric.tasks import LEARNING_SUFFIX, get_task, task_configs

from ..data import default_dataset, load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark

"""Columns the engine reads; ``image_id`` is used when present to share images across tasks."""

VIEWS = {
    "ranking": (
        formulas.RANKING_METRICS,
        "Ranking view (%): sentence accuracy / set accuracy / set error",
    ),
    "binary": (
        formulas.BINARY_METRICS[:3],
        "Binary view (%): accuracy / precision true / precision false",
    ),
}
HEADLINE = {"ranking": "sentence_accuracy", "binary": "accuracy"}


def default_data() -> str:
    """``$BLA_DATASET``, else ``./bla_dataset`` when built there, else the Hub id."""
    return default_dataset(hub_ids.DATASET)


def resolve_task(name: str) -> str:
    """A short task name (ap), a config or a learning config -> the config name."""
    task = get_task(name)
    return name if name == task.learning_config else task.config


def task_label(config: str) -> str:
    """``AP``, or ``AP learning`` for a learning config."""
    try:
        task = get_task(config)
    except ValueError:
        return config
    return task.abbreviation + (" learning" if config.endswith(LEARNING_SUFFIX) else "")


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one BLA config (the first ``limit``), in dataset order."""
    ds = load_split(data, config, split, BENCHMARK_ROWS["bla"].required)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    return [_item(config, row) for row in ds]


def _item(config: str, row: Mapping[str, Any]) -> Item:
    if len(row["captions"]) != len(row["labels"]):
        raise ValueError(f"{config} datapoint {row['id']}: captions and labels differ in length")
    ref = ImageRef(image_key(row["image"], row.get("image_id")), row["image"])
    return Item(
        benchmark="bla",
        task=config,
        id=str(row["id"]),
        images=(ref,),
        captions=tuple(row["captions"]),
        labels=(tuple(int(x) for x in row["labels"]),),
        caption_types=tuple(row["caption_types"]),
        meta={"predicate": row.get("predicate") or "", "image_id": row.get("image_id")},
    )


def answer_labels(answers: Sequence[Sequence[str]]) -> list[list[int]]:
    """Generated answers as labels: an answer starting with 'yes' -> 1, anything else -> 0."""
    return [[int(a.strip().lower().startswith("yes")) for a in row] for row in answers]


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Ranking, binary and pairwise metrics of one task, all from ``bla_metric.formulas``; for
    runs under the authors' protocols (records with ``parsed``), the binary view is theirs
    (:func:`bla_metric.paper.paper_metrics`: parsed answers only) and ``unparsed`` counts the
    rest."""
    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    if probabilistic:
        predicted = formulas.threshold_labels(scores, 0.5)
    else:
        predicted = formulas.top_k_labels(scores, labels)
    out: dict[str, Any] = {
        "n": len(records),
        "ranking": formulas.ranking_metrics(scores, labels),
        "binary": formulas.binary_metrics(predicted, labels),
        "pairwise": formulas.pairwise_preferences(scores, [r["caption_types"] for r in records]),
    }
    if records and all("parsed" in r for r in records):  # the authors' protocols
        out["binary"] = paper.paper_metrics([r["answers"] for r in records], labels)
        out["unparsed"] = out["binary"]["unparsed"]
    elif records and all("answers" in r for r in records):
        out["binary_answers"] = formulas.binary_metrics(
            answer_labels([r["answers"] for r in records]), labels
        )
    return out


def intervals(
    records: Sequence[Mapping[str, Any]], probabilistic: bool, resamples: int, seed: int
) -> dict[str, Any]:
    """Percentile bootstrap 95% intervals of each view's table metrics (datapoints resampled,
    :func:`bla_metric.formulas.compute`): {view: {metric: [low, high]}}. The authors' protocols,
    whose binary view counts parsed answers only, get the ranking view's."""
    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    ranking = formulas.compute(scores, labels, "ranking", bootstrap=resamples, seed=seed)["ci"]
    out = {"ranking": {k: ranking[k] for k in VIEWS["ranking"][0]}}
    if not (records and all("parsed" in r for r in records)):
        threshold = 0.5 if probabilistic else formulas.TOP_K
        binary = formulas.compute(
            scores, labels, "binary", threshold, bootstrap=resamples, seed=seed
        )["ci"]
        out["binary"] = {k: binary[k] for k in VIEWS["binary"][0]}
    return out


LEADERBOARD_METRICS = ("sentence_accuracy", "set_accuracy")
"""The ranking-view metrics a leaderboard ranks by (higher is better), the default first."""


def item_stats(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> tuple[str, dict]:
    """The ranking view's per-datapoint statistics
    (:func:`bla_metric.stats.significance.datapoint_stats`: set accuracy and error 0/1, correct
    and sentences, whose sums give sentence accuracy)."""
    labels = [r["labels"] for r in records]
    return "ranking", significance.datapoint_stats([r["scores"] for r in records], labels)


def reference_rows(view: str) -> list[dict[str, Any]]:
    """The published rows of one view (``bla_metric.references``)."""
    return references.reference_rows(protocol=view)


BENCHMARK = Benchmark(
    name="bla",
    title="BLA: Basic Language Abilities",
    hub_id=hub_ids.DATASET,
    task_names=task_configs,
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=references.CHANCE,
    task_label=task_label,
    default_data=default_data,
    intervals=intervals,
    leaderboard_metrics=LEADERBOARD_METRICS,
    item_stats=item_stats,
)


def load_bla(
    data: str | None = None,
    tasks: Sequence[str] = (),
    split: str = "test",
    limit: int | None = None,
) -> list[Item]:
    """BLA items of ``tasks`` (codes or configs; default: all) from ``data`` (default: ours)."""
    from . import load_items

    configs = [resolve_task(t) for t in (tasks or task_configs())]
    return load_items(BENCHMARK, data or default_data(), configs, split, limit)
