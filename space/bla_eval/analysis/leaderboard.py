"""A leaderboard with statistics over any number of runs on the same datapoints.

Per task, on a ranking-view metric (sentence accuracy by default, or set accuracy): each run's score
with its bootstrap 95% interval, its rank with a bootstrap rank interval (datapoints resampled
jointly for all runs), the groups of statistically tied runs (paired bootstrap tests of every
pair, Holm-corrected) and the smallest difference the task's datapoints can detect (paired test,
alpha 0.05, power 0.8). The formulas are in :mod:`bla_metric.ranks`; this module builds the
report, the table and the plot.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from bla_metric import ranks, significance

from ..tables import Table
from .rundata import Run

METRICS = ("sentence_accuracy", "set_accuracy")
"""The ranking-view metrics a leaderboard ranks by (higher is better)."""
DEFAULT_METRIC = METRICS[0]
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def run_label(run: Run) -> str:
    """The run's display name (``--name``), else the last part of its model id."""
    name = run.results.get("display_name")
    if name:
        return str(name)
    model = run.model.rstrip("/").split("/")[-1]
    return model[:-5] if model.endswith(".gguf") else model


def labels(runs: Sequence[Run]) -> list[str]:
    """Display names of the runs, made unique with the run folder's name where two agree."""
    names = [run_label(r) for r in runs]
    names = [
        f"{name} ({run.path.name})" if names.count(name) > 1 else name
        for name, run in zip(names, runs, strict=True)
    ]
    return [f"{name} #{k + 1}" if names.count(name) > 1 else name for k, name in enumerate(names)]


def leaderboard(
    runs: Sequence[Run],
    resamples: int = 2000,
    seed: int = 0,
    metric: str = DEFAULT_METRIC,
) -> dict[str, Any]:
    """{task: {"metric", "n", "models": [per run: label, value, ci, rank, interval, groups],
    "groups": [[labels]], "pairs": [{a, b, difference, p_value, p_holm}], "detectable": {...}}}
    for runs already checked to score the same datapoints, ranked by ``metric`` (one of
    :data:`METRICS`)."""
    if metric not in METRICS:
        raise ValueError(f"leaderboard metric {metric!r}: expected one of {', '.join(METRICS)}")
    names = labels(runs)
    out: dict[str, Any] = {}
    for task in runs[0].tasks:
        refs = [r["labels"] for r in runs[0].records[task]]
        stats = [
            significance.datapoint_stats([r["scores"] for r in run.records[task]], refs)
            for run in runs
        ]
        rows = ranks.rank_intervals(stats, "ranking", metric, resamples, seed)
        tests = ranks.pairwise_tests(stats, "ranking", metric, resamples, seed)
        groups = ranks.tied_groups([row["value"] for row in rows], tests)
        for m, row in enumerate(rows):
            row["model"] = names[m]
            row["groups"] = "".join(
                LETTERS[g % 26] for g, members in enumerate(groups) if m in members
            )
        out[task] = {
            "metric": metric,
            "n": len(refs),
            "models": sorted(rows, key=lambda row: (row["rank"], row["model"])),
            "groups": [[names[m] for m in group] for group in groups],
            "pairs": [{"a": names[i], "b": names[j], **test} for (i, j), test in tests.items()],
            "detectable": ranks.detectable_difference(stats, "ranking", metric),
        }
    return out


def task_label(config: str) -> str:
    """The short name of a task in tables and plots (AP, CO, RC)."""
    from ..benchmarks import get_benchmark

    return get_benchmark("bla").task_label(config)


def leaderboard_table(result: dict[str, Any]) -> Table:
    """One row per (task, model), one number per cell, values in %."""
    rows = []
    for task, board in result.items():
        for row in board["models"]:
            rows.append(
                [
                    task_label(task),
                    row["model"],
                    100 * row["value"],
                    100 * row["ci"][0],
                    100 * row["ci"][1],
                    row["rank"],
                    row["interval"][0],
                    row["interval"][1],
                    row["groups"],
                ]
            )
    metric = next(iter(result.values()))["metric"] if result else DEFAULT_METRIC
    return Table(f"Leaderboard ({metric.replace('_', ' ')}, %)", table_columns(metric), rows)


def table_columns(metric: str = DEFAULT_METRIC) -> list[str]:
    """The columns of :func:`leaderboard_table` for a leaderboard ranked by ``metric``."""
    return [
        "task",
        "model",
        metric.replace("_", " "),
        "CI low",
        "CI high",
        "rank",
        "rank low",
        "rank high",
        "tied group",
    ]


def markdown_section(result: dict[str, Any], resamples: int, seed: int) -> str:
    """The leaderboard as a Markdown section: table, tied groups, detectable difference."""
    from ..tables import markdown

    metric = next(iter(result.values()))["metric"] if result else DEFAULT_METRIC
    lines = [
        f"## Leaderboard with rank intervals ({metric.replace('_', ' ')})",
        "",
        f"Per task: the score with its bootstrap 95% interval, the rank (1 = best) with its 95% "
        f"rank interval ({resamples} resamples of the datapoints drawn jointly for all runs, seed "
        f"{seed}), and tied groups: runs in score order whose every pair has a Holm-corrected "
        "paired bootstrap p-value of at least 0.05 share a letter. Values in %.",
        "",
        markdown(leaderboard_table(result)),
        "",
    ]
    for task, board in result.items():
        d = board["detectable"]
        groups = "; ".join(
            f"{LETTERS[g % 26]}: " + ", ".join(members) for g, members in enumerate(board["groups"])
        )
        lines.append(
            f"- {task_label(task)} (n = {board['n']}): tied groups {groups}. Smallest "
            "detectable difference "
            f"{100 * d['mde']:.2f} points = (z(0.975) + z(0.8)) × sd / √n with sd "
            f"{100 * d['sd']:.2f} points of the per-datapoint paired differences "
            f"(alpha {d['alpha']}, power {d['power']})."
        )
    return "\n".join(lines) + "\n"


def _short(name: str, width: int = 28) -> str:
    """A label cut to ``width`` characters (the plot's axis keeps its room)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def leaderboard_figure(result: dict[str, Any]) -> bytes:
    """PNG: per task, each run's score with its 95% interval, labelled with rank and rank
    interval; runs best first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(result)
    count = max(len(board["models"]) for board in result.values())
    figure, axes = plt.subplots(
        1, len(tasks), figsize=(4.2 * len(tasks), 0.5 * count + 1.6), squeeze=False
    )
    for axis, task in zip(axes[0], tasks, strict=True):
        board = result[task]
        models = board["models"][::-1]  # best on top
        y = list(range(len(models)))
        values = [100 * m["value"] for m in models]
        low = [100 * (m["value"] - m["ci"][0]) for m in models]
        high = [100 * (m["ci"][1] - m["value"]) for m in models]
        axis.errorbar(values, y, xerr=[low, high], fmt="o", capsize=3, color="tab:blue")
        axis.set_yticks(
            y,
            [
                f"{_short(m['model'])}  #{m['rank']} [{m['interval'][0]}–{m['interval'][1]}] "
                f"{m['groups']}"
                for m in models
            ],
            fontsize=8,
        )
        axis.set_xlabel(f"{board['metric'].replace('_', ' ')} (%)")
        axis.set_title(f"{task_label(task)} (n = {board['n']})", fontsize=10)
        axis.grid(axis="x", alpha=0.3)
    figure.suptitle("Scores with 95% CIs; rank [rank interval] tied group", fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()
