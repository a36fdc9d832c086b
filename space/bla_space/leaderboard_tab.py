"""The Leaderboard tab: published reference rows plus every run finished in this Space."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import gradio as gr
from bla_eval.analysis.leaderboard import METRICS as LEADERBOARD_METRICS
from bla_eval.analysis.leaderboard import table_columns

from . import analysis_tab, published_tab, results_store, views
from .config import SpaceConfig
from .evaluate_tab import VIEW_CHOICES

INTRO = (
    "Per benchmark (picked below): its published numbers (BLA: paper Table 2, thesis Tables "
    "6.2-6.3, chance) and every run of it finished in this Space: one row per model and "
    "protocol, the most complete run kept. Click a column "
    "header to sort. Quick runs score only the first N datapoints of each task (see "
    "*datapoints*); paper rows score all of them. A run whose model and protocol are those of a "
    "published row, with every number of the row within its tolerance, says *reproduces ROW* in "
    "its source (`bla-eval reproduce ROW --run DIR` prints the comparison)."
)


STATS_INTRO = (
    "Which differences are real? The {benchmark} runs of this Space that scored the same "
    "datapoints (the largest such group): per task the {metric} with its bootstrap 95% interval, "
    "the rank "
    "(1 = best) with its simultaneous 95% confidence set for the rank (all sets hold together; "
    "{resamples} resamples of the datapoints drawn jointly for all runs, seed 0), whether a run "
    "may be the best, and the groups not separated (runs sharing a letter: the step-down of the "
    "rank sets separates no pair; no significant difference, not a test of equivalence). Runs "
    "with a control image are ranked by their image gain (the metric "
    "with the real image minus with the control image). The same as `bla-eval compare RUN RUN "
    "... --metric {name}`."
)
STATS_RESAMPLES = 1000
STATS_MAX_RUNS = 20
"""The most runs the rank intervals rank at once (the newest): the rank sets' work grows with
the square of the runs (every ordered pair is a hypothesis), so 300 sweep cells would hold the
page's worker for minutes; ``bla-eval compare`` ranks any number."""
STATS_HEADERS = table_columns()
"""The rank-interval table's columns before a metric is picked (sentence accuracy)."""


def benchmark_menu() -> list[tuple[str, str]]:
    """(label, name) of every registered benchmark, BLA first: the statistics' picker."""
    from bla_eval.benchmarks import benchmark_names, get_benchmark

    return [(get_benchmark(name).label, name) for name in benchmark_names()]


def metric_menu(benchmark: str) -> list[tuple[str, str]]:
    """(label, metric) of what a leaderboard of ``benchmark`` may rank by, the default first."""
    from bla_eval.benchmarks import get_benchmark

    return [(m.replace("_", " "), m) for m in get_benchmark(benchmark).ranked_metrics]


def same_datapoint_runs(config: SpaceConfig, benchmark: str = "bla") -> list:
    """The largest group (two or more) of this Space's runs of ``benchmark`` that scored the
    same datapoints under the same condition (protocol, prompts and control:
    :func:`views.ranking_label`; models of every kind together, as ``bla-eval compare`` ranks
    them), newest first; [] when no two runs did. Like is ranked with like: one model's
    zero-shot and control cells, or a sweep's cells of two protocols, are never ranked against
    each other."""
    from bla_eval.analysis.rundata import load_run

    groups: dict[tuple, list] = {}
    for found in results_store.list_runs(config.folders):
        if found.results.get("benchmark", "bla") != benchmark:
            continue
        try:
            run = load_run(found.path, any_benchmark=True)
        except (ValueError, OSError):
            continue
        ids = tuple((t, tuple(str(r["id"]) for r in recs)) for t, recs in run.records.items())
        groups.setdefault((views.ranking_label(found.results), ids), []).append(run)
    best = max(groups.values(), key=len, default=[])
    return best if len(best) > 1 else []


def statistics(config: SpaceConfig, metric: str | None = None, benchmark: str = "bla"):
    """(Markdown, table, plot) of the rank intervals and ties of this Space's runs of
    ``benchmark``, ranked by ``metric`` (one of its leaderboard metrics; another or None: its
    default): per task, rows from the best down."""
    import io

    import pandas as pd
    from bla_eval.analysis import leaderboard as board
    from bla_eval.benchmarks import get_benchmark
    from PIL import Image

    bench = get_benchmark(benchmark)
    metric = metric if metric in bench.ranked_metrics else bench.ranked_metrics[0]
    runs = same_datapoint_runs(config, benchmark)
    total, runs = len(runs), runs[:STATS_MAX_RUNS]
    intro = STATS_INTRO.format(
        benchmark=bench.label,
        metric=metric.replace("_", " "),
        resamples=STATS_RESAMPLES,
        name=metric,
    )
    if not runs:
        text = intro + "\n\nNo two runs of this Space scored the same datapoints yet."
        return text, pd.DataFrame(columns=table_columns(metric)), None
    result = board.leaderboard(runs, STATS_RESAMPLES, 0, metric)
    table = board.leaderboard_table(result, benchmark)
    tasks = {t: k for k, t in enumerate(dict.fromkeys(row[0] for row in table.rows))}
    rank = table.columns.index("rank")
    rows = sorted(table.rows, key=lambda row: (tasks[row[0]], row[rank]))  # stable: best first
    frame = views.rendered(replace(table, rows=rows))
    condition = views.ranking_label(runs[0].results)
    lines = [intro, "", f"Ranked: {len(runs)} runs of **{condition}** on the same datapoints.", ""]
    if total > len(runs):
        lines[2] = (
            f"Ranked: the {len(runs)} newest of {total} runs of **{condition}** on the same "
            f"datapoints (at most {STATS_MAX_RUNS} at once here: the rank sets' work grows with "
            "the square of the runs; `bla-eval compare` ranks them all)."
        )
    for task, stats in result.items():
        lines.append(
            f"- **{bench.task_label(task)}** (n = {stats['n']}): "
            f"{detectable_text(stats['detectable'])}"
        )
    plot = Image.open(io.BytesIO(board.leaderboard_figure(result, benchmark)))
    return "\n".join(lines), frame, plot


def detectable_text(detectable: dict) -> str:
    """The smallest detectable difference as a sentence; undefined when the runs' per-datapoint
    differences do not vary (runs that agree on every datapoint give no spread to measure)."""
    mde, sd = detectable.get("mde"), detectable.get("sd")
    if not sd or mde is None or not math.isfinite(mde):
        return (
            "smallest detectable difference undefined: the runs' paired differences do not "
            "vary (they agree on every datapoint)."
        )
    return (
        f"smallest detectable difference {100 * mde:.1f} points (paired test, alpha 0.05, "
        "power 0.8)."
    )


@dataclass
class LeaderboardTab:
    """What other tabs wire to: the refresh handler and its inputs/outputs."""

    refresh: object
    benchmark: gr.Radio
    view: gr.Radio
    table: gr.Dataframe
    refresh_statistics: object
    stats_metric: gr.Radio
    statistics: list

    @property
    def inputs(self) -> list:
        """The inputs of :attr:`refresh`: the view and the benchmark."""
        return [self.view, self.benchmark]

    @property
    def stats_inputs(self) -> list:
        """The inputs of :attr:`refresh_statistics`: the benchmark and the rank-by metric."""
        return [self.benchmark, self.stats_metric]


def view_menu(benchmark: str) -> list[tuple[str, str]]:
    """(label, view) of a benchmark's report views (BLA's as the Evaluate tab names them)."""
    from bla_eval.benchmarks import get_benchmark

    labels = {value: label for label, value in VIEW_CHOICES}
    return [(labels.get(v, v), v) for v in get_benchmark(benchmark).views]


def build(config: SpaceConfig) -> LeaderboardTab:
    """Lay out the tab and its events (call inside ``gr.Blocks``)."""
    gr.Markdown(INTRO)
    with gr.Row():
        benchmark = gr.Radio(
            benchmark_menu(),
            value="bla",
            label="Benchmark",
            scale=3,
            elem_id="leaderboard-benchmark",
        )
        view = gr.Radio(
            view_menu("bla"), value="ranking", label="Metrics", scale=3, elem_id="leaderboard-view"
        )
        button = gr.Button("Refresh", size="sm", scale=1)
    table = gr.Dataframe(
        leaderboard(config, "ranking"),
        interactive=False,
        wrap=True,
        column_widths=views.column_widths(views.leaderboard_columns()),
        label="Leaderboard (%)",
        elem_id="leaderboard-table",
        show_search="search",
        max_height=views.WHOLE_TABLE,
    )

    def refresh(view_choice: str, name: str = "bla"):
        """The leaderboard table of benchmark ``name`` in ``view_choice``, as percentages."""
        return leaderboard(config, view_choice, name)

    with gr.Accordion("Rank intervals and ties", open=True, elem_id="leaderboard-stats"):
        stats_metric = gr.Radio(
            metric_menu("bla"),
            value=LEADERBOARD_METRICS[0],
            label="Rank by",
            elem_id="leaderboard-stats-metric",
        )
        stats_text = gr.Markdown(elem_id="leaderboard-stats-text")
        stats_table = gr.Dataframe(
            headers=STATS_HEADERS,
            interactive=False,
            wrap=True,
            label="Rank intervals (%)",
            elem_id="leaderboard-stats-table",
            max_height=views.WHOLE_TABLE,
        )
        stats_plot = gr.Image(
            label="Scores with 95% intervals; rank [simultaneous rank set] not-separated group",
            show_label=False,
            type="pil",
            interactive=False,
            visible=False,
            elem_id="leaderboard-stats-plot",
        )

    def refresh_statistics(name: str, metric: str):
        """Rank intervals, ties and their plot for this Space's runs on the same datapoints (no
        plot box before two runs can be ranked)."""
        text, frame, plot = statistics(config, metric, name)
        widths = views.column_widths(frame.columns)
        return (
            text,
            gr.Dataframe(frame, column_widths=widths),
            gr.Image(plot, visible=plot is not None),
        )

    def pick_benchmark(name: str):
        """The views and rank-by choices of benchmark ``name`` (the first of each picked) and
        its leaderboard table."""
        shown, metrics = view_menu(name), metric_menu(name)
        first = shown[0][1]
        frame = gr.Dataframe(
            value=leaderboard(config, first, name),
            column_widths=views.column_widths(views.leaderboard_columns(name)),
        )
        return (
            gr.Radio(choices=shown, value=first),
            frame,
            gr.Radio(choices=metrics, value=metrics[0][1]),
        )

    published_tab.build(config, stats_metric)
    tab = LeaderboardTab(
        refresh,
        benchmark,
        view,
        table,
        refresh_statistics,
        stats_metric,
        [stats_text, stats_table, stats_plot],
    )
    view.input(refresh, tab.inputs, table, api_name=False)
    benchmark.input(pick_benchmark, benchmark, [view, table, stats_metric], api_name=False).then(
        refresh_statistics, tab.stats_inputs, tab.statistics, api_name=False
    )
    stats_metric.input(refresh_statistics, tab.stats_inputs, tab.statistics, api_name=False)
    button.click(refresh, tab.inputs, table, api_name="leaderboard").then(
        refresh_statistics, tab.stats_inputs, tab.statistics, api_name=False
    )
    analysis_tab.build_compare(config)
    return tab


def leaderboard(config: SpaceConfig, view: str, benchmark: str = "bla"):
    """The leaderboard table of ``benchmark`` in ``view`` from its reference rows and the
    results folder."""
    runs = [
        views.board_document(run.results, run.cell)
        for run in results_store.list_runs(config.folders, benchmark)
    ]
    return views.leaderboard_table(runs, view, benchmark)
