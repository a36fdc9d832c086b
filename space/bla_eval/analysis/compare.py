"""``bla-eval compare RUN RUN ...``: are the differences between runs real?

All runs must have scored the same datapoints (same tasks, same ids, same labels); otherwise the
comparison is refused with an error naming the first difference. Per task and headline metric
(ranking view: sentence accuracy, set accuracy, set error; binary view: accuracy, precision
true, precision false): A, B, A - B, a paired bootstrap 95% interval and p-value (seeded), and the
exact McNemar test on set accuracy (per datapoint: both true sentences on top or not). The
statistics are in :mod:`bla_metric.stats.significance`. Over any number of runs (two included) the
report also holds a leaderboard with rank intervals and groups not separated
(:mod:`.leaderboard`); with two runs the paired A/B tables come first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from bla_metric import formulas
from bla_metric.stats import ranks, significance

from .. import tables
from ..outputs import check_replaceable, staged
from ..runs.check import protocol_record
from ..tables import TABLE_FORMATS, Table, markdown_cell, render
from . import leaderboard as board
from .rundata import Run, load_run

COMPARE_COMMAND = "bla-eval compare"
"""The command named in the marker of a comparison folder (it replaces only its own)."""
HEADLINE = {
    "ranking": ("sentence_accuracy", "set_accuracy", "set_error"),
    "binary": ("accuracy", "precision_true", "precision_false"),
}
DEFAULT_RESAMPLES = 2000
LEADERBOARD_PLOT = "leaderboard.png"


def check_same_datapoints(a: Run, b: Run) -> None:
    """Raise ValueError naming the first difference in tasks, datapoints or labels."""
    only_a = [t for t in a.tasks if t not in b.records]
    only_b = [t for t in b.tasks if t not in a.records]
    if only_a or only_b:
        parts = [f"{t} only in {a.path}" for t in only_a]
        parts += [f"{t} only in {b.path}" for t in only_b]
        raise ValueError(f"the runs scored different tasks: {'; '.join(parts)}")
    for task in a.tasks:
        ids_a = [str(r["id"]) for r in a.records[task]]
        ids_b = [str(r["id"]) for r in b.records[task]]
        if ids_a != ids_b:
            set_b, set_a = set(ids_b), set(ids_a)
            missing_b = [i for i in ids_a if i not in set_b]
            missing_a = [i for i in ids_b if i not in set_a]
            detail = (
                f"{missing_b[0]} is only in {a.path} ({len(missing_b)} such)"
                if missing_b
                else f"{missing_a[0]} is only in {b.path} ({len(missing_a)} such)"
            )
            raise ValueError(
                f"the runs scored different datapoints of {task} ({len(ids_a)} vs {len(ids_b)}): "
                f"{detail}"
            )
        for ra, rb in zip(a.records[task], b.records[task], strict=True):
            if list(ra["labels"]) != list(rb["labels"]):
                raise ValueError(
                    f"{task} datapoint {ra['id']} has labels {ra['labels']} in {a.path} but "
                    f"{rb['labels']} in {b.path}: the runs used different datasets"
                )


def binary_labels(run: Run, task: str) -> list[list[int]]:
    """The run's binary-view labels, as its results document made them (threshold or top k)."""
    scores = [r["scores"] for r in run.records[task]]
    labels = [r["labels"] for r in run.records[task]]
    view = str(protocol_record(run.results).get("binary_view", "top-k"))
    if view.startswith("threshold"):
        return formulas.threshold_labels(scores, float(view.split()[-1]))
    return formulas.top_k_labels(scores, labels)


def compare_runs(a: Run, b: Run, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict:
    """{task: {"n", "ranking": {metric: stats}, "binary": {...}, "mcnemar_set_accuracy": {...}}}."""
    check_same_datapoints(a, b)
    out: dict[str, Any] = {}
    for task in a.tasks:
        labels = [r["labels"] for r in a.records[task]]
        scores_a = [r["scores"] for r in a.records[task]]
        scores_b = [r["scores"] for r in b.records[task]]
        ranking = significance.paired_bootstrap(
            scores_a, scores_b, labels, "ranking", resamples=resamples, seed=seed
        )
        binary = significance.paired_bootstrap(
            binary_labels(a, task),
            binary_labels(b, task),
            labels,
            "binary",
            resamples=resamples,
            seed=seed,
        )
        stats_a = significance.datapoint_stats(scores_a, labels)
        stats_b = significance.datapoint_stats(scores_b, labels)
        set_a, set_b = stats_a["set_accuracy"], stats_b["set_accuracy"]
        sentence = [
            ranks.per_datapoint("ranking", "sentence_accuracy", s) for s in (stats_a, stats_b)
        ]
        for side in ("a", "b"):  # a ratio of 0 / 0 in either run: undefined, not 0
            for key in formulas.undefined_ratios({k: v[side] for k, v in binary.items()}):
                binary[key].setdefault("undefined", []).append(side.upper())
        out[task] = {
            "n": len(labels),
            "ranking": {k: ranking[k] for k in HEADLINE["ranking"]},
            "binary": {k: binary[k] for k in HEADLINE["binary"]},
            "mcnemar_set_accuracy": significance.mcnemar_exact(set_a, set_b),
            "sign_flip_sentence_accuracy": significance.sign_flip(
                sentence[0] - sentence[1], seed=seed
            ),
        }
    return out


NO_VARIATION = "inconclusive (no variation)"
"""Printed for a difference whose resamples all gave the same value (no interval, no p)."""
UNDEFINED = "undefined"
"""Printed for a ratio of 0 / 0 (a precision of a run that never said true, or never false)."""


def comparison_frame(result: dict) -> pd.DataFrame:
    """One row per (task, view, metric), values in %: A, B, A-B, CI low/high, p-value. A ratio
    of 0 / 0 (``undefined``) and its difference are empty, and so are the interval and p-value
    of a difference that did not vary over the resamples (``variation`` False): neither is a
    number."""
    nan = float("nan")
    rows = []
    for task, views in result.items():
        for view in HEADLINE:
            for metric, stats in views[view].items():
                undefined = stats.get("undefined", [])
                shown = stats.get("variation", True) and not undefined
                rows.append(
                    {
                        "task": task,
                        "view": view,
                        "metric": metric,
                        "A": nan if "A" in undefined else 100 * stats["a"],
                        "B": nan if "B" in undefined else 100 * stats["b"],
                        "A-B": nan if undefined else 100 * stats["difference"],
                        "CI low": 100 * stats["ci"][0] if shown else nan,
                        "CI high": 100 * stats["ci"][1] if shown else nan,
                        "p (bootstrap)": stats["p_value"] if shown else nan,
                    }
                )
    return pd.DataFrame(rows)


def _value(value: float, signed: bool = False) -> str:
    if value != value:
        return UNDEFINED
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _interval_cells(row: Any, stats: dict) -> list[str]:
    """The 95% CI and p cells of one row of :func:`comparison_frame`."""
    if stats.get("undefined"):
        return [UNDEFINED, "–"]
    if not stats.get("variation", True):
        return [NO_VARIATION, "–"]
    return [f"[{row['CI low']:+.2f}, {row['CI high']:+.2f}]", f"{row['p (bootstrap)']:.4g}"]


def run_names(runs: list[Run]) -> list[str]:
    """Each run as the headers name it: its display name (``--name``, else the last part of its
    model id: ``leaderboard.labels``, unique) and its folder, Markdown-escaped."""
    return [
        f"**{markdown_cell(name)}** ({markdown_cell(str(run.path))})"
        for name, run in zip(board.labels(runs), runs, strict=True)
    ]


COMPARISON_COLUMNS = ("task", "view", "metric", "A", "B", "A - B", "95% CI", "p")
"""The columns of the paired bootstrap's table."""
EXACT_TEST_COLUMNS = (
    "task", "n", "both", "A only", "B only", "neither", "p", "sign-flip p (sentence accuracy)",
)  # fmt: skip
"""The columns of the exact tests' table (McNemar on set accuracy, sign flips)."""


def markdown_report(a: Run, b: Run, result: dict, resamples: int, seed: int) -> str:
    name_a, name_b = run_names([a, b])
    lines = [
        "# BLA paired comparison",
        "",
        f"A = {name_a}, B = {name_b}. Same datapoints in both. "
        f"Paired bootstrap: {resamples} resamples of the datapoints, seed {seed}; 95% percentile "
        "interval of A - B; two-sided p-value. Values in %. "
        f"*{NO_VARIATION}*: every resample gave the same difference (no interval, no p-value); "
        f"*{UNDEFINED}*: a ratio of 0 / 0.",
        "",
    ]
    rows = []
    for _, row in comparison_frame(result).iterrows():
        stats = result[row["task"]][row["view"]][row["metric"]]
        cells = [str(row["task"]), str(row["view"]), str(row["metric"]), _value(row["A"])]
        cells += [_value(row["B"]), _value(row["A-B"], signed=True)]
        rows.append(cells + _interval_cells(row, stats))
    lines.append(tables.markdown(Table("", COMPARISON_COLUMNS, rows)))
    lines += [
        "",
        "Exact McNemar test on set accuracy (both true sentences on top), and the sign-flip test "
        "of the sentence accuracy difference (exact: every sign pattern of up to "
        f"{significance.EXACT_FLIPS} non-zero per-datapoint differences, else 20,000 random "
        "ones). Both hold at any n; below 30 datapoints read them, not the bootstrap p:",
        "",
    ]
    rows = []
    for task, views in result.items():
        m = views["mcnemar_set_accuracy"]
        flip = views["sign_flip_sentence_accuracy"]
        counts = [views["n"], m["both"], m["a_only"], m["b_only"], m["neither"]]
        rows.append([task, *map(str, counts), f"{m['p_value']:.4g}", f"{flip['p_value']:.4g}"])
    lines.append(tables.markdown(Table("", EXACT_TEST_COLUMNS, rows)))
    return "\n".join(lines) + "\n"


def cluster_labels(run: Run, column: str, data: str | None) -> dict[str, list[str] | None]:
    """Per task, each datapoint's value of the dataset ``column`` (in record order), or None for
    a task none of whose rows has one (no column, or every value empty or null: each datapoint
    its own cluster). ValueError, naming the run, task and datapoint, where a task's rows have
    values of it that are not labels (empty or null beside real ones, or not text), and where
    no task of the run has it at all: the clustering is never dropped silently."""
    from .rundata import attach_rows

    attach_rows(run, data)
    out: dict[str, list[str] | None] = {}
    for task, rows in run.rows.items():
        values = [row.get(column) for row in rows]
        if all(v is None or v == "" for v in values):
            out[task] = None
            continue
        for row, value in zip(rows, values, strict=True):
            problem = _label_problem(value)
            if problem:
                raise ValueError(
                    f"--cluster {column}: {run.path}: datapoint {task}/{row.get('id')} has "
                    f"{column} {problem}: every datapoint of a clustered task needs its {column} "
                    "as non-empty text"
                )
        out[task] = [str(v) for v in values]
    if all(labels is None for labels in out.values()):
        raise ValueError(
            f"--cluster {column}: no task of {run.path} has a {column} in its dataset rows "
            f"({run.results.get('_analysis_data')}): no datapoint could be clustered"
        )
    return out


def _label_problem(value: Any) -> str | None:
    """What is wrong with a cluster label (None: nothing)."""
    if value is None:
        return "null"
    if not isinstance(value, str):
        return f"{repr(value)[:40]} ({type(value).__name__}, not text)"
    return None if value.strip() else "empty"


def ranking_view(run: Run) -> bool:
    """Whether the run's benchmark ranks with the ranking view's per-datapoint statistics (the
    views the paired A/B tables compare: BLA's)."""
    from ..benchmarks import get_benchmark

    bench = get_benchmark(str(run.results.get("benchmark") or "bla"))
    if bench.item_stats is None:  # the default: per-item values (formulas.MEAN)
        return False
    return bench.item_stats(run.records[run.tasks[0]], False)[0] == "ranking"


def check_all_same_datapoints(runs: list[Run]) -> None:
    """Raise ValueError naming the first run (and difference) that scored other datapoints than
    the first run."""
    for other in runs[1:]:
        check_same_datapoints(runs[0], other)


def comparison_table(result: dict) -> Table:
    """The paired A/B comparison, one number per cell (values in %)."""
    frame = comparison_frame(result)
    return Table("Paired comparison A - B (%)", list(frame.columns), frame.values.tolist())


def compare(
    run_a: str | Path,
    run_b: str | Path,
    output: str | Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[str, dict]:
    """Compare two run folders; write compare.md/.json/.csv into ``output`` when given."""
    report, document = compare_many([run_a, run_b], output, resamples, seed)
    return report, document["tasks"]


def compare_many(
    paths: list[str | Path],
    output: str | Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    table_format: str | None = None,
    metric: str | None = None,
    rank_set: str = board.RANK_SETS[0],
    cluster: str | None = None,
    data: str | None = None,
) -> tuple[str, dict]:
    """Compare two or more run folders of one benchmark: (printed report, document). Two runs
    whose per-item statistics are the ranking view's (BLA's): the paired A/B tables, then the
    leaderboard, ranked by ``metric`` (one of the benchmark's ``ranked_metrics``, None: its
    default; BLA: sentence or set accuracy; runs with a control image: its image gain) with rank
    sets of kind ``rank_set`` (simultaneous or marginal); otherwise the leaderboard.
    ``table_format`` (markdown, latex, csv) prints the tables with one number per cell instead
    of the report. With ``output``, compare.md/.json/.csv, leaderboard.csv and leaderboard.png
    are written there. ``cluster`` (``predicate``) makes the leaderboard's resamples draw
    clusters of datapoints (the dataset's rows, from ``data`` or the one results.json names)."""
    if len(paths) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(paths)}")
    if table_format is not None and table_format not in TABLE_FORMATS:
        raise ValueError(
            f"--table-format {table_format!r}: expected one of {', '.join(TABLE_FORMATS)}"
        )
    if rank_set not in board.RANK_SETS:
        raise ValueError(f"--rank-sets {rank_set!r}: expected one of {', '.join(board.RANK_SETS)}")
    if cluster not in (None, *board.CLUSTERS):
        raise ValueError(f"--cluster {cluster!r}: expected one of {', '.join(board.CLUSTERS)}")
    if output is not None:
        check_replaceable(output, COMPARE_COMMAND)  # refused before the work
    runs = [load_run(p, any_benchmark=True) for p in paths]
    bench = board.benchmark_of(runs)
    check_all_same_datapoints(runs)
    if metric is not None and metric not in bench.ranked_metrics:
        raise ValueError(
            f"--metric {metric!r}: a {bench.label} leaderboard ranks by "
            f"{', '.join(bench.ranked_metrics)}"
        )
    clusters = cluster_labels(runs[0], cluster, data) if cluster else None
    two = len(runs) == 2 and ranking_view(runs[0])
    paired = compare_runs(runs[0], runs[1], resamples, seed) if two else None
    ranked = board.leaderboard(runs, resamples, seed, metric, rank_set, clusters)
    parts = [markdown_report(runs[0], runs[1], paired, resamples, seed)] if paired else []
    if not paired:
        names = ", ".join(run_names(runs))
        parts.append(
            f"# {bench.label} comparison of {len(runs)} runs\n\nRuns: {names}. Same datapoints "
            "in all.\n"
        )
    parts.append(board.markdown_section(ranked, resamples, seed, bench.name))
    report = "\n".join(parts)
    table = board.leaderboard_table(ranked, bench.name)
    tables = ([comparison_table(paired)] if paired else []) + [table]
    printed = report if table_format is None else render(tables, table_format)
    document: dict[str, Any] = {
        "runs": [str(r.path) for r in runs],
        "models": [r.model for r in runs],
    }
    if paired:
        document.update(run_a=str(runs[0].path), run_b=str(runs[1].path))
        document.update(model_a=runs[0].model, model_b=runs[1].model)
    document.update(resamples=resamples, seed=seed, tasks=paired or {}, leaderboard=ranked)
    if output is not None:
        figure = board.leaderboard_figure(ranked, bench.name)
        with staged(output, COMPARE_COMMAND) as stage:
            (stage / "compare.md").write_text(report, encoding="utf-8")
            (stage / "compare.json").write_text(
                json.dumps(document, indent=2) + "\n", encoding="utf-8"
            )
            if paired:
                comparison_frame(paired).to_csv(stage / "compare.csv", index=False)
            (stage / "leaderboard.csv").write_text(
                render([table], "csv").split("\n", 1)[1],
                encoding="utf-8",
            )
            (stage / LEADERBOARD_PLOT).write_bytes(figure)
    return printed, document
