"""Datapoints for the Explore tab: dataset rows joined with a run's per-sentence scores.

Correctness comes from ``bla_metric.formulas`` (top-k labels, ranks, per-datapoint set error) and
records are read with the engine's own reader: this module only selects and arranges.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
from bla_eval.benchmarks.bla import resolve_task
from bla_eval.data import load_split
from bla_eval.outputs import read_records
from bla_eval.runs import SCORES_FILE
from PIL import Image

from bla_metric.formulas import rank_positions, ranking_metrics, top_k_labels
from bla_metric.tasks import TASKS

ALL_VERBS = "all verbs"
SENTENCE_COLUMNS = ["type", "sentence", "truth", "score", "rank", "ranked correctly"]


def task_labels() -> dict[str, str]:
    """Config name -> ``Title (AB)`` of every registered BLA task, in registry order."""
    return {task.config: task.label for task in TASKS.values()}


@lru_cache(maxsize=8)
def load_task(data: str, config: str, split: str = "test") -> Any:
    """The rows of one task config (images left encoded until shown); cached per process."""
    return load_split(data, resolve_task(config), split)


@lru_cache(maxsize=8)
def _index_and_verbs(data: str, config: str) -> tuple[dict[str, int], dict[str, str]]:
    """Row position and predicate of every datapoint id of a task."""
    ds = load_task(data, config).select_columns(
        ["id", "predicate"] if "predicate" in load_task(data, config).column_names else ["id"]
    )
    ids = [str(i) for i in ds["id"]]
    verbs = ds["predicate"] if "predicate" in ds.column_names else [""] * len(ids)
    return {i: n for n, i in enumerate(ids)}, dict(zip(ids, verbs, strict=True))


def verbs(data: str, config: str) -> list[str]:
    """The task's predicates, most frequent first (empty for CO/RC)."""
    counts = pd.Series(list(_index_and_verbs(data, config)[1].values()))
    counts = counts[counts != ""].value_counts()
    return list(counts.index)


@lru_cache(maxsize=4)
def load_scores(run_dir: str | None) -> dict[tuple[str, str], dict]:
    """A run's ``scores.jsonl`` keyed by (config name, datapoint id); empty without a run.

    Cached: a published run folder does not change.
    """
    if run_dir is None:
        return {}
    records = read_records(Path(run_dir) / SCORES_FILE)
    return {(resolve_task(r["task"]), str(r["id"])): r for r in records}


def is_set_error(record: dict) -> bool:
    """Whether the model ranked both false sentences above both true ones (a set error)."""
    return ranking_metrics([record["scores"]], [record["labels"]])["set_error"] == 1


def select_ids(
    data: str,
    config: str,
    scores: dict[tuple[str, str], dict],
    *,
    failures_only: bool = False,
    verb: str | None = None,
) -> list[str]:
    """Datapoint ids of a task, in dataset order (of a run that scored the task: the
    datapoints it scored, so the slider counts the run's own), then filtered.

    ``failures_only`` keeps the run's set errors; ``verb`` keeps AP datapoints of one predicate.
    """
    index, predicates = _index_and_verbs(data, config)
    ids = list(index)
    scored = [i for i in ids if (config, i) in scores]
    ids = scored or ids
    if verb and verb != ALL_VERBS:
        ids = [i for i in ids if predicates[i] == verb]
    if failures_only:
        ids = [i for i in ids if (config, i) in scores and is_set_error(scores[(config, i)])]
    return ids


def datapoint(data: str, config: str, point_id: str) -> dict[str, Any]:
    """One dataset row (image decoded) by id."""
    import datasets

    index, _ = _index_and_verbs(data, config)
    if point_id not in index:
        raise KeyError(f"{config} has no datapoint {point_id!r}")
    row = load_task(data, config)[index[point_id]]
    image = row["image"]
    if isinstance(image, dict):
        image = datasets.Image().decode_example(image)
    return {**row, "image": image.convert("RGB") if isinstance(image, Image.Image) else image}


def sentence_table(row: dict[str, Any], record: dict | None) -> pd.DataFrame:
    """The datapoint's sentences with type and truth, plus the run's score, rank and correctness."""
    table = pd.DataFrame(
        {
            "type": row["caption_types"],
            "sentence": row["captions"],
            "truth": ["true" if y else "false" for y in row["labels"]],
        }
    )
    if record is None:
        return table.assign(score="", rank="", **{"ranked correctly": ""})[SENTENCE_COLUMNS]
    scores, labels = record["scores"], record["labels"]
    predicted = top_k_labels([scores], [labels])[0]
    correct = ["yes" if p == y else "no" for p, y in zip(predicted, labels, strict=True)]
    return table.assign(
        score=distinct_numbers(scores),
        rank=rank_positions(scores, labels),
        **{"ranked correctly": correct},
    )[SENTENCE_COLUMNS]


def distinct_numbers(values: list[float], least: int = 4, most: int = 12) -> list[str]:
    """``values`` with ``least`` decimals, more (up to ``most``) where two that differ would
    print the same: scores that rank apart never look tied."""
    for decimals in range(least, most + 1):
        texts = [f"{v:.{decimals}f}" for v in values]
        if len(set(texts)) == len(set(values)):
            return texts
    return [repr(float(v)) for v in values]
