"""The conditions one run scores under: several prompt templates (``--prompts``) and the real
image beside a control image (``--control``), each image encoded once for all of them.

Layout of ``scores.jsonl`` (a run with one template and no control writes none of these keys, so
its files are those of any run): ``scores`` (and ``answers``) are always the first template with
the real image, the run's headline; a sweep adds ``prompts`` ({template: scores}, every template
of the sweep, the first included); a control adds ``control`` ({"kind", "images": the control
image keys, "scores", and "prompts" in a sweep}). ``results.json`` adds, per template,
``prompts`` (each task's metrics) and ``sensitivity`` (``bla_metric.stats.robustness``), and for a
control ``control`` (each task's metrics against the control images and the image gain).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bla_metric.stats import robustness

from .benchmarks import TEXT_SIMILARITIES
from .items import Item, as_record_value
from .queries import Query

PROMPTS = "prompts"
CONTROL = "control"
CONDITION_KEYS = (PROMPTS, "sensitivity", CONTROL)
"""The parts of ``results.json`` a sweep or a control adds."""
RESAMPLES = 2000
"""Bootstrap resamples of every interval in ``results.json`` (the tasks' intervals, sensitivity and
image gain), all drawn with seed :data:`SEED`: one number has one interval in every table."""
SEED = 0


def sweep_queries(
    base: Callable[[Item], Sequence[Query]], templates: Sequence[str]
) -> Callable[[Item], list[Query]]:
    """The queries of an item under every template: the base queries (one per caption), once
    per template in order."""

    def queries(item: Item) -> list[Query]:
        asked = list(base(item))
        return [replace(q, template=t) for t in templates for q in asked]

    return queries


def by_template(
    matrix: Sequence[Sequence[Any]], templates: Sequence[str]
) -> dict[str, list[list[Any]]]:
    """Split ``[image][template x caption]`` into {template: [image][caption]}."""
    width = len(matrix[0]) // len(templates)
    return {
        t: [list(row[k * width : (k + 1) * width]) for row in matrix]
        for k, t in enumerate(templates)
    }


class Conditions:
    """Assembles one score record per item from its scored conditions (the real item and, with a
    control, its twin), and calls ``write(item, scores, answers, fields)`` once both are in."""

    def __init__(
        self,
        templates: Sequence[str],
        twins: Mapping[tuple[str, str], Item] | None,
        control: str | None,
        write: Callable[..., None],
    ) -> None:
        self.templates = list(templates)
        self.twins = dict(twins or {})
        self.twin_ids = {id(t) for t in self.twins.values()}
        self.control = control
        self.write = write
        self.real: dict[tuple[str, str], tuple[Item, Any, Any]] = {}
        self.controls: dict[tuple[str, str], tuple[Item, Any]] = {}

    def items(self, pending: Sequence[Item]) -> list[Item]:
        """The items to score: the pending ones, then their control twins."""
        return [*pending, *(self.twins[(i.task, i.id)] for i in pending if self.twins)]

    def on_scored(
        self, item: Item, scores: list[list[float]], answers: Any, terms: Any = None
    ) -> None:
        """One scored item (real or twin); writes the record when its conditions are in
        (``terms``: the real item's per-sentence terms, kept beside its scores)."""
        key = (item.task, item.id)
        if id(item) in self.twin_ids:
            self.controls[key] = (item, scores)
        else:
            self.real[key] = (item, scores, answers, terms)
        if key in self.real and (not self.twins or key in self.controls):
            self._write(key)

    def _split(self, scores: Any) -> tuple[Any, dict[str, Any]]:
        if not self.templates:
            return scores, {}
        parts = by_template(scores, self.templates)
        first = parts[self.templates[0]]
        return first, {PROMPTS: {t: as_record_value(m) for t, m in parts.items()}}

    def _write(self, key: tuple[str, str]) -> None:
        item, scores, answers, terms = self.real.pop(key)
        headline, fields = self._split(scores)
        if answers is not None and self.templates:
            answers = by_template(answers, self.templates)[self.templates[0]]
        if self.twins:
            twin, control_scores = self.controls.pop(key)
            control_headline, control_fields = self._split(control_scores)
            fields[CONTROL] = {
                "kind": self.control,
                "images": [ref.key for ref in twin.images],
                "scores": as_record_value(control_headline),
                **control_fields,
            }
        self.write(item, headline, answers, fields, terms)


def _view(records: Sequence[Mapping[str, Any]], scores: Callable[[Mapping], Any]) -> list[dict]:
    """Records with their ``scores`` replaced (and the first template's answers dropped); the
    captions' similarities by the text encoder alone are kept (no image or template changes
    them: a control's TOT is the run's)."""
    keep = ("task", "id", "labels", "caption_types", TEXT_SIMILARITIES)
    return [{**{k: r[k] for k in keep if k in r}, "scores": scores(r)} for r in records]


def results_fields(
    summarise: Callable[[list[dict], bool], dict[str, Any]],
    by_task: Mapping[str, Sequence[Mapping[str, Any]]],
    probabilistic: bool,
    metric: str,
) -> dict[str, Any]:
    """What a sweep and a control add to ``results.json`` (nothing for a plain run).

    ``by_task``: each task's records (in any order: they are taken in the order of their ids, so
    the intervals do not depend on the order of ``scores.jsonl``); ``summarise``: the
    benchmark's; ``metric``: the ranking metric of the sensitivity and image-gain intervals.
    """
    by_task = {t: sorted(rs, key=lambda r: str(r["id"])) for t, rs in by_task.items()}
    records = [r for rs in by_task.values() for r in rs]
    out: dict[str, Any] = {}
    if records and PROMPTS in records[0]:
        templates = list(records[0][PROMPTS])
        out[PROMPTS] = {
            t: {
                task: summarise(_view(rs, lambda r, t=t: r[PROMPTS][t]), probabilistic)
                for task, rs in by_task.items()
            }
            for t in templates
        }
        out["sensitivity"] = sensitivity(by_task, templates, metric)
    if records and CONTROL in records[0]:
        out[CONTROL] = control_summary(summarise, by_task, probabilistic, metric)
    return out


def sensitivity(
    by_task: Mapping[str, Sequence[Mapping[str, Any]]], templates: Sequence[str], metric: str
) -> dict[str, Any]:
    """Per task, ``bla_metric.stats.robustness.template_sensitivity`` of the ranking ``metric``; and
    the order of the tasks by it across templates (``robustness.sweep_sensitivity``)."""
    return robustness.sweep_sensitivity(
        {
            task: ({t: [r[PROMPTS][t] for r in rs] for t in templates}, [r["labels"] for r in rs])
            for task, rs in by_task.items()
            if rs
        },
        metric,
        resamples=RESAMPLES,
        seed=SEED,
    )


def control_summary(
    summarise: Callable[[list[dict], bool], dict[str, Any]],
    by_task: Mapping[str, Sequence[Mapping[str, Any]]],
    probabilistic: bool,
    metric: str,
) -> dict[str, Any]:
    """Each task's metrics against the control images and the image gain of ``metric`` (per
    template in a sweep), with the flag of a model that answers from priors."""
    records = [r for rs in by_task.values() for r in rs]
    kind = records[0][CONTROL]["kind"]
    templates = list(records[0][CONTROL].get(PROMPTS, {})) or [None]
    tasks: dict[str, Any] = {}
    for task, rs in by_task.items():
        if not rs:
            continue
        labels = [r["labels"] for r in rs]
        gains = {}
        for t in templates:
            real = [r["scores"] if t is None else r[PROMPTS][t] for r in rs]
            control = [r[CONTROL]["scores"] if t is None else r[CONTROL][PROMPTS][t] for r in rs]
            gains[t or ""] = robustness.image_gain(
                real, control, labels, metric, resamples=RESAMPLES, seed=SEED
            )
        tasks[task] = {
            "metrics": summarise(_view(rs, lambda r: r[CONTROL]["scores"]), probabilistic),
            "image_gain": gains[templates[0] or ""],
            **({"image_gain_by_template": gains} if templates != [None] else {}),
        }
    flagged = all(t["image_gain"]["from_priors"] for t in tasks.values())
    return {"kind": kind, "tasks": tasks, "answers_from_priors": flagged}
