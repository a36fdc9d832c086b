"""Benchmark specs: how to read a benchmark's dataset, summarise its scores and report them.

A benchmark is one module that builds a :class:`Benchmark` and one line in ``BENCHMARKS`` below
(or a :func:`register_benchmark` call). The engine, the report and the Space read everything they
need about a benchmark from its spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bla_metric import formulas
from bla_metric.registry import Registry

from ..items import Item

View = tuple[tuple[str, ...], str]
"""(metric keys shown, table title) of one report view."""
ItemStats = Callable[[Sequence[Mapping[str, Any]], bool], tuple[str, dict[str, Any]]]
"""(records of one task, probabilistic) -> (mode of :mod:`bla_metric.formulas`, per-item
statistics {name: array (n,)}): what a leaderboard ranks with."""
TEXT_SIMILARITIES = "text_similarities"
"""The field of a score record that holds its captions' similarities to each other,
``[caption][caption]``, for a benchmark whose spec asks for them (``text_similarities``)."""
MEAN_TOLERANCE = 1e-9
"""How far the mean of the items' own metrics may be from the task's (the last bits of a sum)."""


@dataclass(frozen=True)
class Benchmark:
    """Everything the engine, the report and the Space need to know about one benchmark.

    - ``task_names()``: the default tasks (configs) of a run, in report order;
    - ``resolve_task(name)``: a task name as users type it -> the dataset config name (an error
      names the bad task);
    - ``read_items(data, task, split, limit)``: the items of one task (the first ``limit``);
    - ``summarise(records, probabilistic)``: the metrics of one task from its score records (the
      formulas themselves live in ``bla_metric``); ``probabilistic`` says the scores are
      probabilities (binary view by threshold 0.5) rather than ranks;
    - ``views``: report tables, view -> (metric keys, title); ``headline``: view -> main metric;
    - ``reference_rows(view)``: published rows ``{"model", "source", "task", <metric>: value}``;
    - ``chance``: chance level per metric (None when it depends on the item);
    - ``task_label(task)``: the short name of a task in tables;
    - ``intervals(records, probabilistic, resamples, seed)``: bootstrap 95% intervals of the
      headline metrics of one task, {view: {metric: [low, high]}} (None: the benchmark has none);
    - ``leaderboard_metrics``: the metrics a leaderboard may rank by (higher is better), its
      default first (empty: the main view's headline);
    - ``item_stats(records, probabilistic)``: the per-item statistics of one task a leaderboard
      ranks with, ``(mode, {name: array (n,)})`` in a mode of :mod:`bla_metric.formulas` (None:
      :func:`mean_item_stats`, each item's metrics from ``summarise`` of the item alone);
    - ``text_similarities``: each item's record holds, under :data:`TEXT_SIMILARITIES`, the
      similarity of each pair of its captions by the model's text encoder alone
      (``Scorer.text_similarities``; a kind without one gives none, and ``summarise`` says so).
    """

    name: str
    title: str
    hub_id: str
    task_names: Callable[[], Sequence[str]]
    resolve_task: Callable[[str], str]
    read_items: Callable[[str, str, str, int | None], list[Item]]
    summarise: Callable[[Sequence[Mapping[str, Any]], bool], dict[str, Any]]
    views: Mapping[str, View]
    headline: Mapping[str, str]
    reference_rows: Callable[[str], list[dict[str, Any]]] = lambda view: []
    chance: Mapping[str, float] | None = None
    task_label: Callable[[str], str] = str
    default_data: Callable[[], str] | None = None
    intervals: Callable[[Sequence[Mapping[str, Any]], bool, int, int], dict[str, Any]] | None = None
    leaderboard_metrics: tuple[str, ...] = ()
    item_stats: ItemStats | None = None
    text_similarities: bool = False

    @property
    def label(self) -> str:
        """The short name of the benchmark for menus: its title up to the colon (``VALSE``)."""
        return self.title.split(":")[0]

    @property
    def main_view(self) -> str:
        """The view whose headline metric is the benchmark's one number per task (the first)."""
        return next(iter(self.headline))

    @property
    def ranked_metrics(self) -> tuple[str, ...]:
        """The metrics a leaderboard may rank by, the default first."""
        return self.leaderboard_metrics or (self.headline[self.main_view],)

    def view_of(self, metric: str) -> str:
        """The view whose table shows ``metric`` (ValueError naming the benchmark's metrics)."""
        for view, (keys, _) in self.views.items():
            if metric in keys:
                return view
        shown = ", ".join(k for keys, _ in self.views.values() for k in keys)
        raise ValueError(f"{self.label} has no metric {metric!r}: its metrics are {shown}")

    def paired_stats(
        self, records: Sequence[Mapping[str, Any]], probabilistic: bool
    ) -> tuple[str, dict[str, Any]]:
        """The per-item statistics of one task's records: ``item_stats``, else
        :func:`mean_item_stats`."""
        if self.item_stats is not None:
            return self.item_stats(records, probabilistic)
        return mean_item_stats(self, records, probabilistic)

    def data_or_default(self, data: str | None) -> str:
        """``data`` or the benchmark's default dataset (a local build, else its Hub id)."""
        if data:
            return data
        return self.default_data() if self.default_data is not None else self.hub_id


def build_required(label: str, builder: str) -> Callable[[], str]:
    """A ``default_data`` for a benchmark that has no dataset repo of this layout on the Hub: a
    ValueError saying to build one with ``python -m builders <builder>`` and pass ``--data``."""

    def refuse() -> str:
        raise ValueError(
            f"{label} has no default dataset: build one from the authors' release with "
            f"`python -m builders {builder}` and give its folder with --data"
        )

    return refuse


BENCHMARKS: Registry[Benchmark] = Registry(
    "benchmark",
    lazy={
        name: f"{__name__}.{module}:BENCHMARK"
        for name, module in (
            ("bla", "bla"),
            ("valse", "valse"),
            ("vl-checklist", "vl_checklist"),
            ("winoground", "winoground"),
            ("sugarcrepe", "sugarcrepe"),
            ("sugarcrepe-pp", "sugarcrepe_pp"),
            ("aro", "aro"),
            ("mmvp-vlm", "mmvp_vlm"),
            ("naturalbench", "naturalbench"),
        )
    },
)
"""Benchmark name -> spec (``--benchmark NAME``): the built-in ones by the module of this package
that defines ``BENCHMARK`` (imported on first use), then those registered at run time."""
register_benchmark = BENCHMARKS.register
unregister_benchmark = BENCHMARKS.unregister
benchmark_names = BENCHMARKS.names
get_benchmark = BENCHMARKS.require


def load_items(
    benchmark: Benchmark,
    data: str,
    tasks: Sequence[str],
    split: str = "test",
    limit: int | None = None,
) -> list[Item]:
    """The items of ``tasks`` (config names), the first ``limit`` of each, in dataset order."""
    items: list[Item] = []
    for task in tasks:
        items.extend(benchmark.read_items(data, task, split, limit))
    return items


def mean_item_stats(
    bench: Benchmark, records: Sequence[Mapping[str, Any]], probabilistic: bool
) -> tuple[str, dict[str, Any]]:
    """``(formulas.MEAN, {metric: values})`` for the benchmark's leaderboard metrics: each item's
    value is the metric of ``summarise`` over that item alone (a 0/1 outcome for the share of
    items right). Checked: the values' mean is the task's metric, else ValueError naming the
    metric (one that is not a mean over items, AUROC or a mean over groups, needs the spec's
    ``item_stats``)."""
    views = {metric: bench.view_of(metric) for metric in bench.ranked_metrics}
    if not records:
        return formulas.MEAN, {metric: np.empty(0) for metric in views}
    whole = bench.summarise(records, probabilistic)
    values: dict[str, list[float]] = {metric: [] for metric in views}
    for record in records:
        try:
            alone = bench.summarise([record], probabilistic)
            for metric, view in views.items():
                values[metric].append(float(alone[view][metric]))
        except (ArithmeticError, KeyError, TypeError, ValueError) as err:
            raise ValueError(
                f"{bench.label}: the metric of item {record.get('id')!r} alone cannot be "
                f"computed ({err}): the benchmark's spec needs item_stats"
            ) from err
    for metric, view in views.items():
        mean, task = float(np.mean(values[metric])), float(whole[view][metric])
        if not abs(mean - task) <= MEAN_TOLERANCE * max(1.0, abs(task)):
            raise ValueError(
                f"{bench.label}: {metric} is not a mean over items (the items' own give "
                f"{mean:.6g}, the task {task:.6g}): the benchmark's spec needs item_stats"
            )
    return formulas.MEAN, {metric: np.asarray(v, float) for metric, v in values.items()}
