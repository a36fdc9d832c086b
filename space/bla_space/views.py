"""Results documents and reference rows arranged as tables and plot data (percentages).

No metric is computed here: every number comes from a results document (``bla_eval``) or from the
reference rows of its benchmark. Tasks, views and headline metrics come from the benchmark's spec
(``bla_eval.benchmarks``), so a new task or benchmark needs no edit here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from bla_eval.benchmarks import Benchmark, get_benchmark
from bla_eval.runs import protocol_name
from bla_eval.tables import P_COLUMN_RE, Table, cell

from bla_metric.likelihood import LIKELIHOOD_SCORES

from .references import ReferenceRow, reference_rows

METRIC_LABELS: dict[str, str] = {
    "sentence_accuracy": "sent. acc",
    "set_accuracy": "set acc",
    "set_error": "set err",
    "accuracy": "acc",
    "precision_true": "prec. T",
    "precision_false": "prec. F",
}
METRIC_NAMES: dict[str, str] = {
    "sentence_accuracy": "sentence accuracy",
    "accuracy": "accuracy",
}
"""Long names of the plotted (headline) metrics."""
THIS_RUN_GROUP = "this run"
GROUP_COLORS: dict[str, str] = {
    THIS_RUN_GROUP: "#4f46e5",
    "chance": "#9ca3af",
    "published model": "#f59e0b",
    "people": "#10b981",
}
"""Bar colours of the plot groups."""
THIS_RUN = "this run"
TABLE_FIXED_COLUMNS = ("model", "source", "kind", "protocol", "datapoints")


def benchmark_of(results: dict) -> Benchmark:
    """The spec of the benchmark a results document was scored on (BLA for older runs)."""
    return get_benchmark(results.get("benchmark", "bla"))


def table_tasks(bench: Benchmark, results: dict | None = None) -> list[str]:
    """The benchmark's tasks, then any other task of ``results`` (e.g. a learning config)."""
    extra = list((results or {}).get("tasks", {}))
    return list(dict.fromkeys([*bench.task_names(), *extra]))


def view_metrics(bench: Benchmark, view: str) -> tuple[str, ...]:
    """The metric columns of one view of a benchmark."""
    return tuple(bench.views[view][0])


def column(bench: Benchmark, task: str, metric: str) -> str:
    """Table column name of one task's metric, e.g. ``AP sent. acc``."""
    return f"{bench.task_label(task)} {METRIC_LABELS.get(metric, metric)}"


def percent(value: float | None) -> float | None:
    """A fraction as a percentage rounded to two decimals (None stays None)."""
    return None if value is None else round(100 * float(value), 2)


def protocol_label(results: dict) -> str:
    """A short name of the run's protocol, e.g. ``zero-shot, top-k, cosine``."""
    protocol = results.get("protocol") or {}
    if not isinstance(protocol, dict):
        return protocol_name(results)
    name = protocol_name(results)  # icl-sd / icl-dd runs kept apart
    score = protocol.get("score") if protocol.get("score") in LIKELIHOOD_SCORES else None
    parts = [name, score, protocol.get("binary_view"), protocol.get("similarity")]
    parts += conditions(results)
    return ", ".join(str(p) for p in parts if p)


def conditions(results: dict) -> list[str]:
    """What a sweep of prompts or an image control adds to a run's protocol (``4 prompts``,
    ``control blank``): such runs are no copies of the plain one and are never ranked with it."""
    out = []
    prompts = results.get("prompts")
    if isinstance(prompts, dict) and prompts:
        out.append(f"{len(prompts)} prompts")
    control = results.get("control")
    if isinstance(control, dict) and control.get("kind"):
        out.append(f"control {control['kind']}")
    return out


def condition_label(results: dict) -> str:
    """``benchmark · protocol`` of a run (its protocol with its control and prompts): the runs
    ranked together share it."""
    return f"{results.get('benchmark', 'bla')} · {protocol_label(results)}"


def ranking_label(results: dict) -> str:
    """``benchmark · protocol`` of a run with its control and prompts, without how its kind
    scores (cosine, top-k, P(yes)): the condition the runs ranked together share, as
    ``bla-eval compare`` ranks any runs of one condition on the same datapoints."""
    parts = [protocol_name(results), *conditions(results)]
    return f"{results.get('benchmark', 'bla')} · {', '.join(str(p) for p in parts if p)}"


def display_name(results: dict) -> str:
    """The run's display name (``--name``), else its model id (a local folder's by the
    folder's name: the Space shows no path of its machine), on one line
    (``bla_eval.report.display_name``): how every table, menu and plot names a run."""
    from bla_eval.report import display_name as name

    model = str(results.get("model", "?"))
    if not results.get("display_name") and Path(model).is_absolute():
        model = short_name(model)
    return name({**results, "model": model})


def run_row(results: dict, view: str, source: str = THIS_RUN) -> dict:
    """One table row of a results document in ``view`` (e.g. ``ranking`` or ``binary``)."""
    bench = benchmark_of(results)
    tasks = results.get("tasks", {})
    row = {
        "model": display_name(results),
        "source": source,
        "kind": results.get("kind", ""),
        "protocol": protocol_label(results),
        "datapoints": sum(int(t.get("n", 0)) for t in tasks.values()),
    }
    for task in table_tasks(bench, results):
        metrics = (tasks.get(task) or {}).get(view) or {}
        for metric in view_metrics(bench, view):
            row[column(bench, task, metric)] = percent(metrics.get(metric))
    return row


CI_SOURCE = "95% CI"
"""The source cell of the row that gives the run's intervals."""


def interval_row(results: dict, view: str) -> dict | None:
    """The run's 95% interval of each metric in ``view`` as ``[low, high]`` (percent), the one
    every table gives (``bla_eval.report.run_interval``: an older run's shares recomputed, a
    word for 0 / 0 or no variation), or None for a run without them."""
    from bla_eval.report import run_interval

    intervals = ((results.get("confidence_intervals") or {}).get("tasks")) or {}
    if not intervals:
        return None
    row = {**run_row(results, view), "source": CI_SOURCE}
    bench = benchmark_of(results)
    for task in table_tasks(bench, results):
        for metric in view_metrics(bench, view):
            ci = run_interval(results, task, view, metric)
            row[column(bench, task, metric)] = (
                ci
                if isinstance(ci, str) or ci is None
                else f"[{percent(ci[0]):.2f}, {percent(ci[1]):.2f}]"
            )
    return row


def reference_row(bench: Benchmark, ref: ReferenceRow, view: str) -> dict | None:
    """One table row of a reference, or None when it has no numbers in ``view``."""
    if not ref.has_view(view):
        return None
    row = {
        "model": ref.model,
        "source": ref.source,
        "kind": ref.kind,
        "protocol": ref.protocol,
        "datapoints": None,
    }
    for task in table_tasks(bench):
        metrics = ref.tasks.get(task, {}).get(view, {})
        for metric in view_metrics(bench, view):
            row[column(bench, task, metric)] = percent(metrics.get(metric))
    return row


def _frame(rows: Iterable[dict | None]) -> pd.DataFrame:
    """Rows as a DataFrame of Python values (None where a source has no number)."""
    table = pd.DataFrame([r for r in rows if r is not None], dtype=object)
    return table.where(table.notna(), None)


def metrics_table(results: dict, view: str) -> pd.DataFrame:
    """The run's metrics, their 95% intervals (a row below, where ``results.json`` has them),
    then the reference rows (chance, humans, paper, thesis) of ``view``.

    Every task has its columns (empty for the run where it did not score that task), so the
    table keeps one shape.
    """
    bench = benchmark_of(results)
    refs = [reference_row(bench, r, view) for r in reference_rows(bench.name)]
    table = _frame([run_row(results, view), interval_row(results, view), *refs])
    return table.drop(columns=["datapoints", "kind", "protocol"])


def short_name(model: str) -> str:
    """``org/name`` or ``/a/local/folder`` -> ``name`` / ``folder`` (for plot labels)."""
    return model.rstrip("/").rsplit("/", 1)[-1] or model


def bar_frame(results: dict, view: str, config: str) -> pd.DataFrame:
    """Plot data of one task: the run's headline metric next to the references' (percent).

    Columns ``model``, ``value``, ``group`` (this run, chance, published model, people).
    """
    bench = benchmark_of(results)
    metric = bench.headline[view]
    value = ((results["tasks"].get(config) or {}).get(view) or {}).get(metric)
    rows = [
        {
            "model": display_name(results)
            if results.get("display_name")
            else short_name(str(results.get("model", "?"))),
            "value": percent(value),
            "group": THIS_RUN_GROUP,
        }
    ]
    for ref in reference_rows(bench.name):
        ref_value = ref.tasks.get(config, {}).get(view, {}).get(metric)
        if ref_value is not None:
            rows.append({"model": ref.model, "value": percent(ref_value), "group": _group(ref)})
    return pd.DataFrame(rows).dropna(subset=["value"])


def _group(ref: ReferenceRow) -> str:
    if ref.kind == "human":
        return "people"
    return "chance" if not ref.kind else "published model"


NUMBER_CHARACTERS = 5
"""The room a number column needs in characters ("-10.00" fits): a header word longer than
this widens its column."""


def column_widths(columns: Iterable[str]) -> list[str]:
    """Widths that fit a table of this module on one screen: text columns wide, numbers narrow,
    the rest shared by the longest word of each header (no header word broken inside)."""
    columns = [str(c) for c in columns]
    fixed = {"model": 11, "source": 15, "kind": 9, "protocol": 11, "datapoints": 9}
    room = {
        c: max([NUMBER_CHARACTERS, *(len(w) for w in c.split())]) for c in columns if c not in fixed
    }
    left = 100 - sum(fixed[c] for c in columns if c in fixed)
    unit = left / max(1, sum(room.values()))
    return [f"{fixed[c] if c in fixed else unit * room[c]:.1f}%" for c in columns]


WHOLE_TABLE = 100_000
"""A table's ``max_height`` (pixels) that no table of the Space reaches: every row is shown in
the page, none behind an inner scroll bar."""

PIXEL_WIDTHS = {"model": 150, "source": 170, "kind": 115, "protocol": 120, "datapoints": 120}
METRIC_PIXELS = 110


def pixel_widths(columns: Iterable[str]) -> list[str]:
    """Widths in pixels for a table too wide for one screen (it scrolls sideways): every column
    wide enough for its header's words, "datapoints" on one line."""
    return [f"{PIXEL_WIDTHS.get(str(c), METRIC_PIXELS)}px" for c in columns]


def metric_columns(view: str, benchmark: str = "bla") -> list[str]:
    """The metric columns of every task of a benchmark in ``view``."""
    bench = get_benchmark(benchmark)
    return [column(bench, t, m) for t in table_tasks(bench) for m in view_metrics(bench, view)]


def metrics_table_columns(benchmark: str = "bla") -> list[str]:
    """Column layout of the Evaluate tab's table (every view has as many columns)."""
    return [
        "model",
        "source",
        *metric_columns(next(iter(get_benchmark(benchmark).views)), benchmark),
    ]


def leaderboard_columns(benchmark: str = "bla") -> list[str]:
    """Column layout of the Leaderboard table of one benchmark."""
    view = next(iter(get_benchmark(benchmark).views))
    return [*TABLE_FIXED_COLUMNS, *metric_columns(view, benchmark)]


CELL_KEY = "_sweep_cell"
"""Key the Leaderboard tab adds to the copy of a sweep cell's results: its cell id."""


def board_document(results: dict, cell: str = "") -> dict:
    """A run's results as the leaderboards take them: a sweep cell's with its ``cell`` id
    (:data:`CELL_KEY`, shown in the source column)."""
    return {**results, CELL_KEY: cell} if cell else results


def run_source(results: dict) -> str:
    """``Space run <date>`` (a sweep's cell: ``sweep cell <id>``), and the published rows the
    run reproduces (every number of the row within its tolerance: ``bla_eval.reproduce``)."""
    from bla_eval.reproduce import reproduced_rows

    cell = results.get(CELL_KEY)
    when = str(results.get("created", ""))[:10]
    source = f"sweep cell {cell}" if cell else f"Space run {when}"
    protocol = results.get("protocol")
    limit = protocol.get("limit") if isinstance(protocol, dict) else None
    if limit:  # a quick run is no full-benchmark row: it says so beside them
        source += f"; first {limit} per task"
    rows = reproduced_rows(results)
    return source + (f"; reproduces {', '.join(rows)}" if rows else "")


def board_key(results: dict) -> tuple[str, str]:
    """The leaderboard row a run competes for: its display name and protocol."""
    return display_name(results), protocol_label(results)


def kept_runs(runs: Iterable[dict], benchmark: str = "bla") -> dict[tuple[str, str], dict]:
    """The run each leaderboard row of ``benchmark`` shows (:func:`board_key` -> results):
    the most complete (most datapoints, then the newest)."""
    best: dict[tuple[str, str], tuple[tuple[int, str], dict]] = {}
    for results in (r for r in runs if benchmark_of(r).name == get_benchmark(benchmark).name):
        tasks = results.get("tasks") or {}
        rank = (sum(int(t.get("n", 0)) for t in tasks.values()), str(results.get("created", "")))
        key = board_key(results)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, results)
    return {key: results for key, (_, results) in best.items()}


def leaderboard_table(runs: Iterable[dict], view: str, benchmark: str = "bla") -> pd.DataFrame:
    """References plus finished runs of one benchmark: one row per model and protocol
    (:func:`kept_runs`), rows sorted by the headline metric's columns in task order (the
    first task's best on top, a row without it below), in the page as in the CSV."""
    bench = get_benchmark(benchmark)
    kept = kept_runs(runs, benchmark).values()
    rows = [run_row(results, view, source=run_source(results)) for results in kept]
    refs = [reference_row(bench, r, view) for r in reference_rows(bench.name)]
    table = _frame([*refs, *rows])
    label = METRIC_LABELS.get(bench.headline[view], bench.headline[view])
    headline = [c for c in table.columns if c.endswith(label)]
    if headline:
        keys = table[headline].astype(float).fillna(-math.inf)
        table = table.loc[keys.sort_values(headline, ascending=False, kind="stable").index]
    return table.reset_index(drop=True)


def listing_line(results: dict, runs: Iterable[dict]) -> str:
    """Where a finished run is listed, truthfully: on the Leaderboard when its row shows it,
    else which run of its model and protocol the row shows instead."""
    shown = kept_runs(runs, benchmark_of(results).name).get(board_key(results))
    if shown is None or shown.get("created") == results.get("created"):
        return "It is listed on the **Leaderboard** (one row per model and protocol)."
    n = sum(int(t.get("n", 0)) for t in (shown.get("tasks") or {}).values())
    return (
        "The **Leaderboard** shows one row per model and protocol, the most complete run: for "
        f"this model it lists the run of {n} datapoints of {str(shown.get('created'))[:10]}, "
        "not this one."
    )


def rendered(table: Table) -> pd.DataFrame:
    """A ``bla_eval.tables.Table`` as the command line's tables print it (numbers with two
    decimals, whole numbers as they are, p-values with three significant digits:
    ``bla_eval.tables.cell``), one text per cell."""
    p_values = [bool(P_COLUMN_RE.match(str(c))) for c in table.columns]
    rows = [[cell(v, p_value=p) for v, p in zip(row, p_values, strict=False)] for row in table.rows]
    return pd.DataFrame(rows, columns=list(table.columns))
