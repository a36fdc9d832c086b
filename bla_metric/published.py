"""The registry of published BLA numbers: every number, how its model was run, and how close a
re-run must come.

- :class:`Setup`: one way a published model was run, named as the paper names the model
  (``CLIP``, ``BLIP2``, ``BLIP2 ICL-SD``): its kind, the Hub id(s) that stand for it, the
  engine protocol and settings that reproduce the authors' run, and whether the engine can run
  it here (``runnable``, with the reason when not).
- :class:`Published`: one number: setup, source (paper or thesis table), task (config), view of
  ``results.json`` (``binary``, ``ranking``), metric, value (a fraction; for setups with a
  ``baseline``, the improvement over the baseline run in fractions), and the tolerance within
  which a re-run counts as reproducing it, with its justification.

Values come from the paper (Chen, Fernández & Pezzelle, EMNLP 2023: Table 2, §5.3, Appendix H,
Tables 3-4) and the master thesis behind it (Tables 6.2-6.3); they are typed in once, in the data
files ``bla_metric/data/published.yaml`` (read here) and ``learning_references.yaml`` (read by
:mod:`bla_metric.learning_references`). :data:`bla_metric.references.REFERENCE_ROWS` (the report,
the Space, the dataset card) is derived from this registry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import learning_references as learning
from .datafile import DATA, Entry, read
from .tasks import TASKS, get_task

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FILE = DATA / "published.yaml"
"""The zero-shot numbers, the setups and the tolerances (the learning tables:
:data:`bla_metric.learning_references.FILE`)."""


@dataclass(frozen=True)
class Setup:
    """How a published model was run, and how the engine reruns it (``bla-eval reproduce``)."""

    name: str
    """The model as the paper names it, plus the learning protocol (``BLIP2 ICL-SD``)."""
    model: str
    """The model as the paper's tables name it (``BLIP2``)."""
    kind: str
    """Engine model kind (``human`` for people)."""
    protocol: str
    """Engine protocol that reproduces the authors' run (``bla_eval.protocols``)."""
    hub_ids: tuple[str, ...] = ()
    """Hub ids standing for the model (the first one is run)."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Other ``RunConfig`` settings of the authors' run (``similarity``, ``dtype``, ``tasks``)."""
    baseline: str | None = None
    """For improvements: the protocol of the zero-shot run on the same split they are over."""
    runnable: bool = True
    reason: str = ""
    """Why the engine cannot run it (``runnable`` False), else how the authors ran it."""

    @property
    def key(self) -> str:
        """The name as ``bla-eval reproduce`` matches it: lower case, letters and digits only."""
        return row_key(self.name)


@dataclass(frozen=True)
class Published:
    """One published number and the tolerance a re-run must meet."""

    setup: str
    source: str
    task: str
    """Config of the tested task (``active_passive``)."""
    view: str
    """``results.json`` view the metric lives in (``binary`` or ``ranking``)."""
    metric: str
    value: float
    """A fraction in [0, 1]; for setups with a baseline, the improvement over it (may be < 0)."""
    tolerance: float
    """Largest |ours - published| (a fraction) that counts as reproducing the number."""
    justification: str
    condition: str = ""
    """What else sets the number apart (Table 4: the task learned on)."""

    def as_dict(self) -> dict[str, Any]:
        """The number with its setup's facts, as one flat record."""
        setup = SETUPS[self.setup]
        return {
            "setup": self.setup,
            "model": setup.model,
            "kind": setup.kind,
            "hub_ids": list(setup.hub_ids),
            "protocol": setup.protocol,
            "baseline": setup.baseline,
            "source": self.source,
            "task": self.task,
            "view": self.view,
            "metric": self.metric,
            "value": self.value,
            "tolerance": self.tolerance,
            "justification": self.justification,
            "condition": self.condition,
            "runnable": setup.runnable,
            "reason": setup.reason,
        }


def row_key(name: str) -> str:
    """``"GPT-2"``, ``"gpt2"`` -> ``"gpt2"``: how row names are compared."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


_CAUSES = ("not run", "thesis", "improvement", "all_same_rate")
"""Tolerance keys of a cause; the others are the runnable zero-shot setups (:func:`_tolerance`)."""


@dataclass(frozen=True)
class Table:
    """One published table: its source, the metrics of its numbers, and per model one row of
    values per task (as printed: percentages, or fractions)."""

    source: str
    metrics: tuple[str, ...]
    rows: dict[str, tuple[tuple[float, ...], ...]]


@dataclass(frozen=True)
class PublishedData:
    """The content of ``published.yaml``, checked."""

    tasks: tuple[str, ...]
    table2: Table
    section53: Table
    appendix_h: Table
    table63: Table
    table62: Table
    reasons: dict[str, str]
    setups: dict[str, Setup]
    tolerances: dict[str, tuple[float, str]]


def read_published(path: Path | Traversable = FILE) -> PublishedData:
    """Read and check ``published.yaml`` (ValueError naming the file and the entry)."""
    top = read(path)
    top.mapping(tuple(PublishedData.__dataclass_fields__))
    tasks = _tasks(top["tasks"])
    setups = _setups(top["setups"])
    tables = {
        name: _table(top[name], len(tasks), setups)
        for name in ("table2", "section53", "appendix_h", "table63", "table62")
    }
    reasons = {key: entry.text() for key, entry in top["reasons"].mapping().items()}
    tolerances = _tolerances(top["tolerances"], setups)
    return PublishedData(tasks, **tables, reasons=reasons, setups=setups, tolerances=tolerances)


def _tasks(entry: Entry) -> tuple[str, ...]:
    for item in entry:
        if item.text() not in TASKS:
            raise item.error(
                f"unknown task code {item.value!r}: expected one of {', '.join(TASKS)}"
            )
    return entry.texts()


def _setups(entry: Entry) -> dict[str, Setup]:
    setups: dict[str, Setup] = {}
    for item in entry:
        fields = item.mapping(tuple(Setup.__dataclass_fields__))
        setup = Setup(
            name=item["name"].text(),
            model=(fields.get("model") or item["name"]).text(),
            kind=item["kind"].text(),
            hub_ids=fields["hub_ids"].texts() if "hub_ids" in fields else (),
            protocol=item["protocol"].text(),
            settings=_settings(fields["settings"]) if "settings" in fields else {},
            baseline=fields["baseline"].text() if "baseline" in fields else None,
            runnable=fields["runnable"].flag() if "runnable" in fields else True,
            reason=item["reason"].text(),
        )
        if setup.name in setups:
            raise item.error(f"a second setup named {setup.name!r}")
        setups[setup.name] = setup
    return setups


def _settings(entry: Entry) -> dict[str, Any]:
    """Run settings: text values, lists of texts as tuples."""
    return {
        key: value.texts() if isinstance(value.value, list) else value.text()
        for key, value in entry.mapping().items()
    }


def _tolerances(entry: Entry, setups: Mapping[str, Setup]) -> dict[str, tuple[float, str]]:
    """Tolerance and justification by key; every key :func:`_tolerance` may pick is there."""
    tolerances = {}
    for key, item in entry.mapping().items():
        item.mapping(("tolerance", "justification"))
        tolerances[key] = (item["tolerance"].number(0.0, 1.0), item["justification"].text())
    run = [s.name for s in setups.values() if s.runnable and s.baseline is None]
    for key in (*_CAUSES, *run):
        if key not in tolerances:
            raise entry.error(f"missing key {key!r} (the tolerance of {key})")
    return tolerances


def _table(entry: Entry, tasks: int, setups: Mapping[str, Setup]) -> Table:
    """A table of ``percent`` (or ``fractions``) rows of one model (``model``) or of many."""
    keys = ("source", "metric", "metrics", "model", "percent", "fractions")
    fields = entry.mapping(keys)
    metrics = fields["metrics"].texts() if "metrics" in fields else (entry["metric"].text(),)
    scale = "percent" if "percent" in fields else "fractions"
    values = entry[scale]
    high = 100.0 if scale == "percent" else 1.0
    rows = {fields["model"].text(): values} if "model" in fields else values.mapping()
    table = {}
    for model, row in rows.items():
        if model not in setups:
            raise row.error(f"no setup named {model!r} in setups")
        by_task = row.items(tasks)
        if "metrics" in fields:
            table[model] = tuple(v.numbers(len(metrics), 0.0, high) for v in by_task)
        else:
            table[model] = tuple(v.number(0.0, high) for v in by_task)
    return Table(entry["source"].text(), metrics, table)


_DATA = read_published()

PUBLISHED_TASKS: tuple[str, ...] = _DATA.tasks
"""Column order of the published tables below (task codes of :mod:`bla_metric.tasks`)."""

PAPER_TABLE2 = _DATA.table2.source
PAPER_SECTION53 = _DATA.section53.source
PAPER_APPENDIX_H = _DATA.appendix_h.source
PAPER_TABLE3 = learning.SOURCE_TABLE3
PAPER_TABLE4 = learning.SOURCE_TABLE4
THESIS_TABLE63 = _DATA.table63.source
THESIS_TABLE62 = _DATA.table62.source

BINARY_KEYS = _DATA.table2.metrics
RANKING_KEYS = _DATA.table63.metrics

TABLE2 = _DATA.table2.rows
"""paper Table 2 (zero-shot, %): accuracy / precision_true / precision_false per task."""
ALL_SAME = _DATA.section53.rows
"""paper §5.3 (%): share of datapoints whose four sentences all got the same label, per task."""
GPT2_PAPER = _DATA.appendix_h.rows["GPT-2"]
"""paper Appendix H (%): GPT-2 accuracy per task."""
TABLE63 = _DATA.table63.rows
"""thesis Table 6.3 (%): sentence accuracy / set accuracy / set error per task."""
EXPERTS = _DATA.table62.rows["Experts"]
"""thesis Table 6.2 (fractions): the experts' sentence accuracy / set accuracy / set error."""

VOLTA = _DATA.reasons["volta"]
PEOPLE = _DATA.reasons["people"]

SETUPS: dict[str, Setup] = _DATA.setups
"""Every setup by name, zero-shot models first."""

TOLERANCE: dict[str, tuple[float, str]] = _DATA.tolerances
"""Tolerance (a fraction) and its justification, by setup or cause."""


def _tolerance(setup: str, source: str, metric: str) -> tuple[float, str]:
    if not SETUPS[setup].runnable:
        return TOLERANCE["not run"]
    if source.startswith("thesis"):
        return TOLERANCE["thesis"]
    if SETUPS[setup].baseline is not None:
        return TOLERANCE["improvement"]
    if metric == "all_same_rate":
        return TOLERANCE["all_same_rate"]
    return TOLERANCE[setup]


def _number(
    setup: str, source: str, task: str, view: str, metric: str, value: float, condition: str = ""
) -> Published:
    tolerance, why = _tolerance(setup, source, metric)
    value = round(value, 6)
    return Published(setup, source, task, view, metric, value, tolerance, why, condition)


def _zero_shot(t: int, task: str) -> list[Published]:
    """The zero-shot numbers of one task, in the order of the report's reference rows."""
    out = []
    (all_same,), (gpt2,) = _DATA.section53.metrics, _DATA.appendix_h.metrics
    for model, values in TABLE2.items():
        for metric, value in zip(BINARY_KEYS, values[t], strict=True):
            out.append(_number(model, PAPER_TABLE2, task, "binary", metric, value / 100))
        if model in ALL_SAME:
            value = ALL_SAME[model][t] / 100
            out.append(_number(model, PAPER_SECTION53, task, "binary", all_same, value))
    out.append(_number("GPT-2", PAPER_APPENDIX_H, task, "binary", gpt2, GPT2_PAPER[t] / 100))
    for model, values in TABLE63.items():
        for metric, value in zip(RANKING_KEYS, values[t], strict=True):
            out.append(_number(model, THESIS_TABLE63, task, "ranking", metric, value / 100))
    for metric, value in zip(_DATA.table62.metrics, EXPERTS[t], strict=True):
        out.append(_number("Experts", THESIS_TABLE62, task, "ranking", metric, value))
    return out


def _learning() -> list[Published]:
    """Tables 3 (SD precisions) and 4 (DD accuracy): improvements over zero-shot."""
    out = []
    for metric, models in learning.TABLE3.items():
        for model, tasks in models.items():
            setup = "BLIP2 ICL-SD" if model == "BLIP2" else f"{model} fine-tuned SD"
            for code, points in tasks.items():
                task = get_task(code).config
                out.append(_number(setup, PAPER_TABLE3, task, "binary", metric, points / 100))
    for model, learned in learning.TABLE4.items():
        setup = "BLIP2 ICL-DD" if model == "BLIP2" else f"{model} fine-tuned DD"
        for learned_on, tested in learned.items():
            condition = f"learned on {get_task(learned_on).config}"
            for code, points in tested.items():
                task = get_task(code).config
                value = points / 100
                out.append(
                    _number(setup, PAPER_TABLE4, task, "binary", "accuracy", value, condition)
                )
    return out


def _registry() -> tuple[Published, ...]:
    numbers = []
    for t, code in enumerate(PUBLISHED_TASKS):
        numbers += _zero_shot(t, get_task(code).config)
    return (*numbers, *_learning())


PUBLISHED: tuple[Published, ...] = _registry()
"""Every published number (zero-shot numbers task by task, then the learning tables)."""


def find_setup(name: str) -> Setup:
    """The setup called ``name`` (case, spaces and dashes ignored: ``blip2-icl-sd``)."""
    for setup in SETUPS.values():
        if setup.key == row_key(name):
            return setup
    names = ", ".join(s.name for s in SETUPS.values())
    raise ValueError(f"unknown published row {name!r}: use one of {names}")


def numbers_of(setup: str) -> list[Published]:
    """The published numbers of one setup, in registry order."""
    return [p for p in PUBLISHED if p.setup == setup]


def setups_of(model_id: str) -> list[Setup]:
    """The setups a Hub id stands for (a run of that model may reproduce them)."""
    return [s for s in SETUPS.values() if model_id in s.hub_ids]
