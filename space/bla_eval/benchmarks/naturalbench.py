"""NaturalBench as a benchmark spec: two images x two questions with opposite answers; question,
image and group accuracy from ``bla_metric.neighbours.naturalbench``.

Reads the dataset repo of ``python -m builders naturalbench``: config ``yes_no`` (the default
task) and ``multiple_choice`` (``--tasks multiple_choice``). Each item's captions are its two
questions with the authors' suffix of its question type (``SUFFIX_FOR_VQA``: ``Please answer Yes
or No.`` / ``Please output the letter corresponding to the correct option.``; asked as they are:
``--prompt naturalbench``), ``labels[i][q]`` = 1 when the answer to question ``q`` on image ``i``
is "Yes" ("A"). A yes/no answer is "yes" when the model's P(yes) is at least 0.5 or, for
generated answers, as upstream ``extract_answer`` reads them; a multiple-choice answer is read
from the generated answer only (P(yes) does not answer "A or B", and the generic yes/no path
has no P(option)). Models that give no answer (similarities, likelihoods) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bla_metric.neighbours import naturalbench
from bla_metric.schema import BENCHMARK_ROWS

from ..data import load_split
from ..items import ImageRef, Item, image_key
from . import Benchmark, build_required

HUB_SOURCE = "BaiqiL/NaturalBench"
"""The authors' Hub release (Apache-2.0, parquet with embedded images)."""
CONFIG = "yes_no"
MULTIPLE_CHOICE = "multiple_choice"
SUFFIX = "Please answer Yes or No."
"""Upstream ``SUFFIX_FOR_VQA["yes_no"]``, appended to the question without a space."""
SUFFIXES = {
    CONFIG: SUFFIX,
    MULTIPLE_CHOICE: "Please output the letter corresponding to the correct option.",
}
"""Upstream ``SUFFIX_FOR_VQA`` per question type (config), appended without a space."""

VIEWS = {
    "accuracy": (
        naturalbench.NATURALBENCH_METRICS,
        "NaturalBench (%): Acc / Q-Acc / I-Acc / G-Acc (yes/no: P(yes) >= 0.5; multiple "
        "choice: generated answers)",
    ),
    "answers": (
        naturalbench.NATURALBENCH_METRICS,
        "NaturalBench (%), generated answers read as upstream's extract_answer (yes/no, A/B)",
    ),
}
HEADLINE = {"accuracy": "g_acc"}
CHANCE = {"acc": 0.5, "q_acc": 0.25, "i_acc": 0.25, "g_acc": 1 / 16}
"""Random yes/no answers: each answer 1/2, two of them 1/4, all four 1/16."""


def resolve_task(name: str) -> str:
    """The config of a task name: ``yes_no`` (``yes-no``, ``naturalbench`` and ``all`` are
    accepted: the default task) or ``multiple_choice`` (``multiple-choice``)."""
    if name in (CONFIG, "yes-no", "naturalbench", "all"):
        return CONFIG
    if name in (MULTIPLE_CHOICE, "multiple-choice"):
        return MULTIPLE_CHOICE
    raise ValueError(f"unknown NaturalBench task {name!r}: use {CONFIG} or {MULTIPLE_CHOICE}")


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The samples of one question type (the first ``limit``), in dataset order."""
    ds = load_split(data, config, split, BENCHMARK_ROWS["naturalbench"].required)
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    suffix = SUFFIXES[config]
    items = []
    for row in ds:
        items.append(
            Item(
                benchmark="naturalbench",
                task=config,
                id=str(row["id"]),
                images=tuple(ImageRef(image_key(row[c]), row[c]) for c in ("image_0", "image_1")),
                captions=(row["question_0"] + suffix, row["question_1"] + suffix),
                labels=_gold(row, config),
                caption_types=("question_0", "question_1"),
                meta={k: row[k] for k in ("source", "question_type") if k in row},
            )
        )
    return items


def _gold(row: Mapping[str, Any], config: str) -> tuple[tuple[int, int], ...]:
    """``labels[i][q]`` of a row: 1 for "Yes" ("A"), 0 for "No" ("B"); answers that are not
    2x2 answers of the config's type are a ValueError naming the item."""
    answers = row["answers"]
    if len(answers) == 2 and all(len(image) == 2 for image in answers):
        try:
            return tuple(
                tuple(naturalbench.naturalbench_gold(a, config) for a in image) for image in answers
            )
        except ValueError:
            pass
    first, second = naturalbench.naturalbench_options(config)
    raise ValueError(
        f"NaturalBench {config} item {row['id']}: answers must be 2x2 "
        f"{first.capitalize()}/{second.capitalize()}, got {answers}"
    )


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """Acc, Q-Acc, I-Acc and G-Acc over the samples of one question type: ``answers`` from the
    generated answers read as upstream reads that type (an answer with neither word is wrong);
    ``accuracy`` from P(yes) >= 0.5 for yes/no questions of a model with probabilities, else
    the ``answers`` view (multiple choice always: P(yes) does not answer "A or B")."""
    config = str(records[0].get("task", CONFIG)) if records else CONFIG
    gold = np.asarray([r["labels"] for r in records], int).reshape(-1, 2, 2)
    out: dict[str, Any] = {"n": len(records)}
    if records and all("answers" in r for r in records):
        answers = [r["answers"] for r in records]
        out["answers"] = naturalbench.naturalbench_answer_metrics(answers, gold, config)
    if probabilistic and config == CONFIG:
        predicted = (np.asarray([r["scores"] for r in records], float) >= 0.5).astype(int)
        correct = naturalbench.naturalbench_correct(predicted.reshape(-1, 2, 2), gold)
        out["accuracy"] = naturalbench.naturalbench_metrics(correct)
    elif "answers" in out:
        out["accuracy"] = out["answers"]
    elif config == MULTIPLE_CHOICE:
        raise ValueError(
            f"NaturalBench {MULTIPLE_CHOICE} needs generated answers (A or B): P(yes) and "
            "likelihoods do not answer it (no P(option) view); score it with a generative "
            "kind and --score yes-no, whose answers are read as upstream's extract_answer"
        )
    else:
        raise ValueError(
            "NaturalBench needs yes/no answers: a model kind with P(yes) (generative, text "
            "with --prompt, openai-api, an ITM head) scored with --score yes-no, not similarities"
        )
    return out


BENCHMARK = Benchmark(
    name="naturalbench",
    title="NaturalBench: natural adversarial VQA pairs",
    hub_id=HUB_SOURCE,
    task_names=lambda: (CONFIG,),  # multiple_choice on request: it needs generated answers
    resolve_task=resolve_task,
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    chance=CHANCE,
    default_data=build_required("NaturalBench", "naturalbench"),
    leaderboard_metrics=("g_acc", "q_acc", "i_acc", "acc"),
)
