"""A run beside the chance and published reference rows: the rows, and the Markdown report.

The Space's tables read the same :func:`reference_rows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import tables
from .benchmarks import Benchmark, get_benchmark
from .protocols import DEFAULT_PROTOCOL
from .tables import Table, markdown_cell, plain

CHANCE = "Chance"


@dataclass(frozen=True)
class ReferenceRow:
    """One published model (or chance, or people) from one source: per task, per view, metrics."""

    model: str
    source: str
    kind: str = ""
    protocol: str = DEFAULT_PROTOCOL
    tasks: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def has_view(self, view: str) -> bool:
        """Whether the source reports any number in ``view``."""
        return any(view in metrics for metrics in self.tasks.values())


def reference_rows(bench: Benchmark) -> list[ReferenceRow]:
    """Chance first (where the benchmark has one), then every (model, source) of the benchmark's
    published rows, in their order."""
    from bla_metric.references import MODEL_KINDS

    grouped: dict[tuple[str, str], ReferenceRow] = {}
    for view in bench.views:
        for row in bench.reference_rows(view):
            source = row["source"].split(";")[0]
            kind = row.get("kind") or MODEL_KINDS.get(row["model"], "")
            ref = grouped.setdefault(
                (row["model"], source),
                ReferenceRow(
                    row["model"], source, kind, "" if kind == "human" else DEFAULT_PROTOCOL
                ),
            )
            skip = ("model", "source", "protocol", "task", "kind")
            ref.tasks.setdefault(row["task"], {})[view] = {
                k: v for k, v in row.items() if k not in skip
            }
    if bench.chance is None:
        return list(grouped.values())
    tasks = {t: {view: dict(bench.chance) for view in bench.views} for t in bench.task_names()}
    return [
        ReferenceRow(CHANCE, "random order / coin flip", protocol="", tasks=tasks),
        *grouped.values(),
    ]


UNDEFINED = "undefined"
"""Printed for a number that does not exist (a ratio of 0 / 0, a NaN)."""
NO_VARIATION = "no variation"
"""Printed for a bootstrap interval whose resamples all gave the same value (width 0)."""


def _pct(value: Any) -> str:
    if value is None:
        return "–"
    return UNDEFINED if float(value) != float(value) else f"{100 * float(value):.2f}"


def _metric(metrics: Mapping[str, Any] | None, key: str) -> Any:
    """One stored metric, or :data:`UNDEFINED` for a ratio of 0 / 0
    (:func:`bla_metric.formulas.undefined_ratios`: the formulas store 0.0 for it)."""
    from bla_metric import formulas

    metrics = metrics or {}
    return UNDEFINED if key in formulas.undefined_ratios(metrics) else metrics.get(key)


def _row(name: str, per_task: Sequence[Mapping[str, Any] | None], keys: Sequence[str]) -> list[str]:
    cells = [
        " / ".join(
            UNDEFINED if _metric(m, k) == UNDEFINED else _pct((m or {}).get(k)) for k in keys
        )
        for m in per_task
    ]
    return [name, *cells]


def reference_cells(bench: Benchmark, tasks: Sequence[str], view: str) -> list[list[str]]:
    """The cells of the rows for chance and every published model of ``view`` (the benchmark's
    reference rows)."""
    keys = bench.views[view][0]
    lines = []
    for ref in reference_rows(bench):
        if ref.has_view(view):
            name = ref.model if ref.model == CHANCE else f"{ref.model} ({ref.source})"
            lines.append(_row(name, [ref.tasks.get(t, {}).get(view) for t in tasks], keys))
    return lines


def run_interval(results: Mapping[str, Any], task: str, view: str, metric: str) -> Any:
    """The run's 95% interval of one metric, the one every table gives for it: ``[low, high]``
    (fractions), :data:`UNDEFINED` for a ratio of 0 / 0, :data:`NO_VARIATION` for a bootstrap
    interval of width 0, or None when ``results.json`` has none. A share of datapoints (set
    accuracy, set error, all-same rate: :data:`bla_metric.formulas.SHARES`) gets
    :func:`bla_metric.formulas.share_interval` of its stored value and n, so an older run,
    whose ``results.json`` holds a percentile bootstrap interval there, reads the same
    Clopper-Pearson interval as a new one and as the leaderboard."""
    from bla_metric import formulas

    tasks = (results.get("confidence_intervals") or {}).get("tasks") or {}
    span = ((tasks.get(task) or {}).get(view) or {}).get(metric)
    if span is None:
        return None
    stored = (results.get("tasks") or {}).get(task) or {}
    if _metric(stored.get(view), metric) == UNDEFINED:
        return UNDEFINED
    value, n = (stored.get(view) or {}).get(metric), stored.get("n")
    if metric in formulas.SHARES.get(view, ()) and value is not None and n:
        return formulas.share_interval(round(float(value) * int(n)), int(n))
    return NO_VARIATION if formulas.no_variation(span) else span


def recomputed_shares(results: Mapping[str, Any]) -> bool:
    """Whether ``results.json`` was written before shares of datapoints had their exact
    interval (its ``confidence_intervals`` name the percentile bootstrap alone): its intervals
    of set accuracy and set error are then recomputed by :func:`run_interval`."""
    method = str((results.get("confidence_intervals") or {}).get("method") or "")
    return bool(results.get("confidence_intervals")) and "Clopper-Pearson" not in method


def _span_text(span: Any) -> str:
    if span is None:
        return "–"
    if isinstance(span, str):
        return span
    return f"[{_pct(span[0])}, {_pct(span[1])}]"


def _interval_row(
    results: dict[str, Any], tasks: Sequence[str], view: str, keys
) -> list[str] | None:
    cells = []
    for task in tasks:
        spans = [run_interval(results, task, view, k) for k in keys]
        if all(span is None for span in spans):
            cells.append("–")
        else:
            cells.append(" / ".join(_span_text(span) for span in spans))
    if all(c == "–" for c in cells):
        return None
    return [INTERVAL_ROW, *cells]


INTERVAL_ROW = "95% CI"
"""The row of the intervals: Clopper-Pearson for shares of datapoints, else bootstrap."""
INTERVAL_NOTE = (
    "95% CI: Clopper-Pearson (exact) for set accuracy, set error and all-same rate; percentile "
    "bootstrap over datapoints for the others ('no variation': every resample gave the same "
    "value; 'undefined': a ratio of 0 / 0)."
)
OLDER_RUN_NOTE = (
    "This run's results.json predates exact intervals for shares of datapoints: their "
    "intervals are recomputed here from its numbers (the same as the leaderboard's)."
)


def display_name(results: dict[str, Any]) -> str:
    """The run's display name (``--name``), else its model id: one line without control
    characters (``tables.plain``; each format escapes it further)."""
    return plain(str(results.get("display_name") or results["model"]))


def score_line(results: Mapping[str, Any]) -> str:
    """What the tables' numbers are made of: results.json's ``score`` (what the kind computes:
    cosine, match probability, mean log-probability, yes-no, caption; for caption-pmi its alpha
    and where it came from), one line without control characters. A run of an earlier version
    recorded ``--score`` there (yes-no for every kind) and is shown as it recorded."""
    score = results.get("score") or {"name": "yes-no"}
    line = f"Score: {score.get('name', 'yes-no')}"
    if score.get("name") == "caption-pmi":
        alpha = score.get("alpha")
        line += f", alpha {alpha:g}" if isinstance(alpha, (int, float)) else ", alpha unknown"
        if score.get("alpha_source"):
            line += f" ({score['alpha_source']})"
    return plain(line)


def markdown_table(results: dict[str, Any]) -> str:
    """Markdown tables (one per view) for a results document, reference rows below."""
    bench = get_benchmark(results.get("benchmark", "bla"))
    tasks = list(results["tasks"])
    columns = ["model", *(bench.task_label(t) for t in tasks)]
    name = f"**{display_name(results)}** ({results['kind']})"
    blocks = []
    for view, (keys, title) in bench.views.items():
        model_row = _row(name, [results["tasks"][t].get(view) for t in tasks], keys)
        interval_row = _interval_row(results, tasks, view, keys)
        rows = [model_row] + ([interval_row] if interval_row else [])
        table = Table(title, columns, [*rows, *reference_cells(bench, tasks, view)])
        blocks.append(f"{title}\n\n{tables.markdown(table)}")
    counts = ", ".join(f"{bench.task_label(t)} n={results['tasks'][t]['n']}" for t in tasks)
    unparsed = [t for t in tasks if "unparsed" in results["tasks"][t]]
    if unparsed:
        shown = ", ".join(
            f"{bench.task_label(t)} {results['tasks'][t]['unparsed']}" for t in unparsed
        )
        counts += f"\n\nUnparsed answers (counted nowhere, as the authors did): {shown}"
    notes = ""
    if results.get("confidence_intervals"):
        notes = f"\n\n{INTERVAL_NOTE}"
        if recomputed_shares(results):
            notes += f" {OLDER_RUN_NOTE}"
    head = markdown_cell(score_line(results))
    return f"{head}\n\n" + "\n\n".join(blocks) + f"\n\nDatapoints: {counts}{notes}\n"


def _number(value: Any) -> float | str | None:
    """A cell in %: None stays empty, a word (undefined, no variation) stays a word."""
    if value is None or isinstance(value, str):
        return value
    return UNDEFINED if float(value) != float(value) else 100 * float(value)


def paper_tables(results: dict[str, Any]) -> list[Table]:
    """The tables of a results document with one number per cell (values in %): per view, the
    run and the reference rows with one column per task and metric; then the run's metrics with
    their 95% intervals (:func:`run_interval`; one row per task, view and metric)."""
    bench = get_benchmark(results.get("benchmark", "bla"))
    tasks = list(results["tasks"])
    out = []
    for view, (keys, title) in bench.views.items():
        columns = ["model"] + [
            f"{bench.task_label(t)} {k.replace('_', ' ')}" for t in tasks for k in keys
        ]
        rows = [
            [display_name(results)]
            + [_number(_metric(results["tasks"][t].get(view), k)) for t in tasks for k in keys]
        ]
        for ref in reference_rows(bench):
            if ref.has_view(view):
                name = ref.model if ref.model == CHANCE else f"{ref.model} ({ref.source})"
                rows.append(
                    [name]
                    + [
                        _number((ref.tasks.get(t, {}).get(view) or {}).get(k))
                        for t in tasks
                        for k in keys
                    ]
                )
        out.append(Table(f"{title.split(':')[0]} ({score_line(results)})", columns, rows))
    rows = []
    for task in tasks:
        for view, (keys, _) in bench.views.items():
            for k in keys:
                span = run_interval(results, task, view, k)
                if span is None or isinstance(span, str):
                    span = [span, span]
                value = _metric(results["tasks"][task].get(view), k)
                rows.append(
                    [bench.task_label(task), view, k.replace("_", " "), _number(value)]
                    + [_number(v) for v in span]
                )
    columns = ["task", "view", "metric", display_name(results), "CI low", "CI high"]
    out.append(Table(f"95% intervals (%) ({score_line(results)})", columns, rows))
    return out
