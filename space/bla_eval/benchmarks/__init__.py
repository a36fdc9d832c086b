"""Benchmark specs: how to read a benchmark's dataset, summarise its scores and report them.

A benchmark is one module that builds a :class:`Benchmark` and one line in ``BUILTIN`` below (or a
:func:`register_benchmark` call). The engine, the report and the Space read everything they need
about a benchmark from its spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..items import Item

View = tuple[tuple[str, ...], str]
"""(metric keys shown, table title) of one report view."""


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
      headline metrics of one task, {view: {metric: [low, high]}} (None: the benchmark has none).
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

    @property
    def label(self) -> str:
        """The short name of the benchmark for menus: its title up to the colon (``VALSE``)."""
        return self.title.split(":")[0]

    @property
    def main_view(self) -> str:
        """The view whose headline metric is the benchmark's one number per task (the first)."""
        return next(iter(self.headline))

    def data_or_default(self, data: str | None) -> str:
        """``data`` or the benchmark's default dataset (a local build, else its Hub id)."""
        if data:
            return data
        return self.default_data() if self.default_data is not None else self.hub_id


BUILTIN: dict[str, str] = {
    "bla": "bla",
    "valse": "valse",
    "vl-checklist": "vl_checklist",
    "winoground": "winoground",
}
"""Benchmark name -> module of this package that defines ``BENCHMARK``."""

BENCHMARKS: dict[str, Benchmark] = {}
"""Benchmarks registered at run time (tests, plug-ins), besides the built-in ones."""


def register_benchmark(spec: Benchmark) -> Benchmark:
    """Make ``spec`` available by name (``--benchmark NAME``); returns it."""
    BENCHMARKS[spec.name] = spec
    return spec


def unregister_benchmark(name: str) -> None:
    """Remove a benchmark added with :func:`register_benchmark`."""
    BENCHMARKS.pop(name, None)


def benchmark_names() -> list[str]:
    """Every available benchmark name, built-in first."""
    return list(dict.fromkeys([*BUILTIN, *BENCHMARKS]))


def get_benchmark(name: str) -> Benchmark:
    """The spec of benchmark ``name`` (built-in modules are imported on first use)."""
    if name in BENCHMARKS:
        return BENCHMARKS[name]
    if name in BUILTIN:
        module = importlib.import_module(f"{__name__}.{BUILTIN[name]}")
        return register_benchmark(module.BENCHMARK)
    raise ValueError(f"unknown benchmark {name!r}: use one of {', '.join(benchmark_names())}")


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
