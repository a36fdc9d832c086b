"""SugarCrepe++ as a benchmark spec: one task per subset, ITT and TOT from
``bla_metric.neighbours.sugarcrepe``.

Reads the dataset repo of ``python -m builders sugarcrepe-pp``: one COCO image per item,
``captions`` = [positive, second positive, negative], ``labels`` = [1, 1, 0].

- ITT (image to text): both positives score strictly above the negative against the image.
- TOT (text only): with the model's text encoder alone, the two positives are strictly closer
  to each other than either is to the negative, sim(P1, P2) > sim(P1, N) and sim(P1, P2) >
  sim(P2, N) by the cosine of their embeddings (the authors' ``evaluate_ulms.py`` and
  ``VLMs/test_*.py``, Sri-Harsha/scpp). The spec asks for ``text_similarities``: each record
  holds its captions' cosines ``[caption][caption]`` from the kinds that embed a sentence on
  its own (the dual encoders: ``contrastive``, ``open_clip``); the records of any other kind
  hold none, and the ``tot`` view says TOT was not computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric.neighbours import sugarcrepe

from ..items import Item
from . import TEXT_SIMILARITIES, Benchmark, build_required
from .sugarcrepe import resolve_subset, strict_summary
from .valse import pair_items

HUB_SOURCE = "Aman-J/SugarCrepe_pp"
"""The authors' Hub release (text only, ``data/<subset>.json``); images are COCO 2017 val's."""

VIEWS = {
    "itt": (("itt",), "SugarCrepe++ (%): ITT (both positives > negative)"),
    "tot": (
        ("tot",),
        "SugarCrepe++ (%): TOT, text encoder only (cos(P1, P2) > cos(P1, N) and cos(P2, N); "
        "kinds with a text encoder)",
    ),
}
HEADLINE = {"itt": "itt", "tot": "tot"}
CHANCE = {"itt": 1 / 3, "tot": 1 / 3}
"""A random order of the three captions puts the negative last one time in three; random
similarities make the positives' pair the closest of the three pairs one time in three."""

NOT_COMPUTED = (
    "not computed: {missing} of {n} records hold no {field} (the model's kind has no text "
    "encoder of its own; the dual encoders, contrastive and open_clip, give them)"
)
"""The ``tot`` view of a task whose records lack the captions' similarities."""


def read_items(data: str, config: str, split: str = "test", limit: int | None = None) -> list[Item]:
    """The items of one subset (the first ``limit``), in dataset order."""
    return pair_items("sugarcrepe-pp", data, config, split, limit, "filename", ("filename",))


def summarise(records: Sequence[Mapping[str, Any]], probabilistic: bool) -> dict[str, Any]:
    """ITT (strict), the items whose lowest positive ties the negative, and ``n``; TOT
    (strict) with its tied items and ``n`` when every record holds its captions'
    similarities, else the ``tot`` view's ``not_computed`` says how many lack them."""
    out = strict_summary(records, "itt")
    missing = sum(TEXT_SIMILARITIES not in r for r in records)
    if missing:
        note = NOT_COMPUTED.format(missing=missing, n=len(records), field=TEXT_SIMILARITIES)
        out["tot"] = {"not_computed": note}
    else:
        similarities = [r[TEXT_SIMILARITIES] for r in records]
        out["tot"] = sugarcrepe.text_only_accuracy(similarities, [r["labels"] for r in records])
    return out


BENCHMARK = Benchmark(
    name="sugarcrepe-pp",
    title="SugarCrepe++: two positives and a hard negative",
    hub_id=HUB_SOURCE,
    task_names=lambda: tuple(sugarcrepe.SUGARCREPE_PP_SUBSETS),
    resolve_task=lambda name: resolve_subset(
        name, sugarcrepe.SUGARCREPE_PP_SUBSETS, "SugarCrepe++"
    ),
    read_items=read_items,
    summarise=summarise,
    views=VIEWS,
    headline=HEADLINE,
    chance=CHANCE,
    default_data=build_required("SugarCrepe++", "sugarcrepe-pp"),
    text_similarities=True,
)
