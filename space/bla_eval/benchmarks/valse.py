"""VALSE as a benchmark spec: one task per instrument, metrics from
``bla_metric.neighbours.valse``.

Reads the dataset repo of ``python -m builders valse``: one image per item, ``captions`` =
[caption, foil], ``labels`` = [1, 0]. Also holds the item reader that VL-CheckList shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import hub_ids
from bla_metric.neighbours import references, valse
from bla_metric.neighbours.references import VALSE_INSTRUMENTS
from bla_metric.schema import BENCHMARK_ROWS

from ..data import load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark
from .bla import answer_labels

VIEWS = {
    "pairwise": (("acc_r", "auroc"), "VALSE (%): acc_r (caption > foil) / AUROC"),
    "binary": (
        ("accuracy", "p_c", "p_f", "min_p_c_p_f"),
        "VALSE binary view (%), models with a match probability: acc / p_c / p_f / min(p_c, p_f)",
    ),
}
HEADLINE = {"pairwise": "acc_r", "binary": "min_p_c_p_f"}
CHANCE = {key: 0.5 for keys, _ in VIEWS.values() for key in keys}
"""Every VALSE metric is 50% for a random model (balanced caption / foil pairs)."""


def resolve_task(name: str) -> str:
    """An instrument config (``counting_hard``) or file stem (``counting-hard``) -> config."""
    config = name.replace("-", "_")
    if config not in VALSE_INSTRUMENTS:
        raise ValueError(
            f"unknown VALSE instrument {name!r}: use one of {', '.join(VALSE_INSTRUMENTS)}"
        )
    return config


def pair_items(
    benchmark: str,
    data: str,
    config: str,
    split: str,
    limit: int | None,
    image_id: str,
    meta_columns: Sequence[str],
) -> list[Item]:
    """Items of a one-image benchmark (texts in ``captions``, truth in ``labels``)."""
    ds = load_split(data, config, split, BENCHMARK_ROWS[benchmark].required)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    items = []
    for row in ds:
        if len(row["captions"]) != len(row["labels"]):
            raise ValueError(f"{config} item {row['id']}: captions and labels differ in length")
        key = image_key(row["image"], f"{benchmark}:{row[image_id]}" if row.get(image_id) else None)
        items.append(
            Item(
                benchmark=benchmark,
                task=config,
                id=str(row["id"]),
                images=(ImageRef(key, row["image"]),),
                captions=tuple(row["captions"]),
                labels=(tuple(int(x) for x in row["labels"]),),
                caption_types=tuple(row["caption_types"]),
                meta={k: row[k] for k in meta_columns if k in row},
            )
        )
    return items


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one VALSE instrument (the first ``limit``), in dataset order."""
    return pair_items(
        "valse",
        data,
        config,
        split,
        limit,
        "image_file",
        (
            "image_file",
            "instrument",
            "dataset",
            "linguistic_phenomena",
            "classes",
            "classes_foil",
            "validated",
        ),
    )


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """acc_r and AUROC always; the binary view for probabilities (threshold 0.5) and, for
    generative models, from their yes/no answers (``binary_answers``)."""
    scores = [r["scores"] for r in records]
    labels = [r["labels"] for r in records]
    metrics = valse.valse_metrics(scores, labels, probabilistic=probabilistic)
    out: dict[str, Any] = {
        "n": len(records),
        "pairwise": {k: metrics[k] for k in ("acc_r", "auroc", "ties", "n")},
    }
    if probabilistic:
        out["binary"] = {k: metrics[k] for k in VIEWS["binary"][0]}
    if records and all("answers" in r for r in records):
        out["binary_answers"] = valse.valse_binary(
            answer_labels([r["answers"] for r in records]), labels
        )
    return out


def reference_rows(view: str) -> list[dict[str, Any]]:
    """VALSE Table 2 rows with a metric of ``view``."""
    keys = VIEWS[view][0]
    return [r for r in references.reference_rows("valse") if any(k in r for k in keys)]


BENCHMARK = Benchmark(
    name="valse",
    title="VALSE: Vision And Language Structured Evaluation",
    hub_id=hub_ids.NEIGHBOUR_DATASETS["valse"],
    task_names=lambda: tuple(VALSE_INSTRUMENTS),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    reference_rows=reference_rows,
    chance=CHANCE,
)
