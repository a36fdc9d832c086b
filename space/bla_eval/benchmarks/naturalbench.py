"""NaturalBench as a benchmark spec: two images x two questions with opposite answers; question,
image and group accuracy from ``bla_metric.compositional``.

Reads the dataset repo of ``python -m builders naturalbench`` (config ``yes_no``): each item's
captions are its two questions with the authors' suffix ``Please answer Yes or No.`` (asked as
they are: ``--prompt naturalbench``), ``labels[i][q]`` = 1 when the answer to question ``q`` on
image ``i`` is "Yes". A model's answer is "yes" when its P(yes) is at least 0.5 or, for generated
answers, as upstream ``extract_answer`` reads them; models that only rank (similarities) give no
answer and are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bla_metric import compositional

from ..data import load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark, build_required

HUB_SOURCE = "BaiqiL/NaturalBench"
"""The authors' Hub release (Apache-2.0, parquet with embedded images)."""
CONFIG = "yes_no"
SUFFIX = "Please answer Yes or No."
"""Upstream ``SUFFIX_FOR_VQA["yes_no"]``, appended to the question without a space."""
REQUIRED_COLUMNS = ("id", "image_0", "image_1", "question_0", "question_1", "answers")

VIEWS = {
    "accuracy": (
        compositional.NATURALBENCH_METRICS,
        "NaturalBench (%): Acc / Q-Acc / I-Acc / G-Acc (yes/no questions; P(yes) >= 0.5)",
    ),
    "answers": (
        compositional.NATURALBENCH_METRICS,
        "NaturalBench (%), generated answers read as upstream's extract_answer",
    ),
}
HEADLINE = {"accuracy": "g_acc"}
CHANCE = {"acc": 0.5, "q_acc": 0.25, "i_acc": 0.25, "g_acc": 1 / 16}
"""Random yes/no answers: each answer 1/2, two of them 1/4, all four 1/16."""


def resolve_task(name: str) -> str:
    """The yes/no config (``yes_no``; ``yes-no``, ``naturalbench`` and ``all`` are accepted)."""
    if name in (CONFIG, "yes-no", "naturalbench", "all"):
        return CONFIG
    raise ValueError(f"unknown NaturalBench task {name!r}: use {CONFIG}")


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The yes/no samples (the first ``limit``), in dataset order."""
    ds = load_split(data, config, split, REQUIRED_COLUMNS)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    items = []
    for row in ds:
        answers = [[str(a).strip().lower() for a in image] for image in row["answers"]]
        if len(answers) != 2 or any(len(a) != 2 or set(a) - {"yes", "no"} for a in answers):
            raise ValueError(
                f"NaturalBench item {row['id']}: answers must be 2x2 Yes/No, got {row['answers']}"
            )
        items.append(
            Item(
                benchmark="naturalbench",
                task=config,
                id=str(row["id"]),
                images=tuple(ImageRef(image_key(row[c]), row[c]) for c in ("image_0", "image_1")),
                captions=(row["question_0"] + SUFFIX, row["question_1"] + SUFFIX),
                labels=tuple(tuple(int(a == "yes") for a in image) for image in answers),
                caption_types=("question_0", "question_1"),
                meta={k: row[k] for k in ("source", "question_type") if k in row},
            )
        )
    return items


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Acc, Q-Acc, I-Acc and G-Acc over the samples: ``accuracy`` from P(yes) >= 0.5 (from the
    generated answers for a model without probabilities), ``answers`` from the generated
    answers read as upstream reads them (an answer with neither word is wrong)."""
    gold = np.asarray([r["labels"] for r in records], int).reshape(-1, 2, 2)
    out: dict[str, Any] = {"n": len(records)}
    if records and all("answers" in r for r in records):
        parsed = [
            [[compositional.naturalbench_answer(a) for a in row] for row in r["answers"]]
            for r in records
        ]
        correct = compositional.naturalbench_correct(np.asarray(parsed).reshape(-1, 2, 2), gold)
        out["answers"] = compositional.naturalbench_metrics(correct)
    if probabilistic:
        predicted = (np.asarray([r["scores"] for r in records], float) >= 0.5).astype(int)
        correct = compositional.naturalbench_correct(predicted.reshape(-1, 2, 2), gold)
        out["accuracy"] = compositional.naturalbench_metrics(correct)
    elif "answers" in out:
        out["accuracy"] = out["answers"]
    else:
        raise ValueError(
            "NaturalBench needs yes/no answers: a model kind with P(yes) (generative, text, "
            "openai-api, an ITM head) scored with --score yes-no, not similarities"
        )
    return out


BENCHMARK = Benchmark(
    name="naturalbench",
    title="NaturalBench: natural adversarial VQA pairs",
    hub_id=HUB_SOURCE,
    task_names=lambda: (CONFIG,),
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    chance=CHANCE,
    default_data=build_required("NaturalBench", "naturalbench"),
    leaderboard_metrics=("g_acc", "q_acc", "i_acc", "acc"),
)
