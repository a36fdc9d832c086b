"""A leaderboard with statistics over any number of runs on the same datapoints.

Per task, on a ranking-view metric (sentence accuracy by default, or set accuracy): each run's score
with its 95% interval (percentile bootstrap; Clopper-Pearson's for set accuracy, as in
results.json), its rank with a 95% confidence set for it (simultaneous over all runs by default,
marginal on request; critical values from permutations of the runs within each datapoint, or
from clusters of datapoints resampled jointly for all runs), the confidence set for the best
run, the groups of statistically
tied runs (consistent with the simultaneous sets), the paired bootstrap tests of every pair
(Holm-corrected) and the smallest difference the task's datapoints can detect (paired test, power
0.8; per adjacent pair at the corrected level). The formulas are in :mod:`bla_metric.ranks`; this
module builds the report, the table and the plot.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric import formulas, ranks, significance
from bla_metric.likelihood import LIKELIHOOD_SCORES

from ..tables import Table, group_label, group_marks, plain
from .rundata import Run

METRICS = ("sentence_accuracy", "set_accuracy")
"""The ranking-view metrics a leaderboard ranks by (higher is better)."""
DEFAULT_METRIC = METRICS[0]
RANK_SETS = ranks.RANK_SETS
"""The kinds of rank sets (simultaneous, the default, or marginal)."""
CLUSTERS = ("predicate",)
"""Dataset columns ``compare --cluster`` draws clusters of datapoints by (AP's predicate)."""
SMALL_N = 30
"""Below this many datapoints per task the report warns that the intervals are rough."""


def run_label(run: Run) -> str:
    """The run's display name (``--name``), else the last part of its model id and, for a
    generative run asked for the sentence's likelihood, its ``--score`` (one line, without
    control characters: ``tables.plain``)."""
    name = run.results.get("display_name")
    if name:
        return plain(str(name))
    model = run.model.rstrip("/").split("/")[-1]
    model = model[:-5] if model.endswith(".gguf") else model
    protocol = run.results.get("protocol")
    score = protocol.get("score") if isinstance(protocol, dict) else None
    return plain(f"{model} ({score})" if score in LIKELIHOOD_SCORES else model)


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
    rank_set: str = RANK_SETS[0],
    clusters: Mapping[str, Sequence[Any] | None] | None = None,
) -> dict[str, Any]:
    """{task: {"metric", "n", "rank_set", "models": [per run: label, value, ci, rank, interval,
    best, groups], "best": [labels], "groups": [[labels]], "pairs": [{a, b, difference,
    p_value, p_holm}], "detectable": {...}}} for runs already checked to score the same
    datapoints, ranked by ``metric`` (one of :data:`METRICS`); ``interval`` is the rank set of
    kind ``rank_set``, ``best`` and the groups come from the simultaneous sets. ``clusters``:
    per task one label per datapoint (in the runs' record order) for a cluster bootstrap, or
    None; ``clustered`` says whether a task's resamples drew clusters."""
    if metric not in METRICS:
        raise ValueError(f"leaderboard metric {metric!r}: expected one of {', '.join(METRICS)}")
    if rank_set not in RANK_SETS:
        raise ValueError(f"--rank-sets {rank_set!r}: expected one of {', '.join(RANK_SETS)}")
    names = labels(runs)
    out: dict[str, Any] = {}
    for task in runs[0].tasks:
        refs = [r["labels"] for r in runs[0].records[task]]
        stats = [
            significance.datapoint_stats([r["scores"] for r in run.records[task]], refs)
            for run in runs
        ]
        groups_of = (clusters or {}).get(task)
        rows = ranks.rank_intervals(
            stats, "ranking", metric, resamples, seed, kind=rank_set, clusters=groups_of
        )
        tests = ranks.pairwise_tests(stats, "ranking", metric, resamples, seed, groups_of)
        groups = ranks.rank_set_groups(
            [row["value"] for row in rows], [row.pop("shown_better_than") for row in rows]
        )
        detectable = ranks.detectable_difference(stats, "ranking", metric)
        for pair in detectable["adjacent"]:
            pair["a"], pair["b"] = names[pair["a"]], names[pair["b"]]
        for m, row in enumerate(rows):
            row["model"] = names[m]
            row["groups"] = group_marks(
                (g for g, members in enumerate(groups) if m in members), len(groups)
            )
        out[task] = {
            "metric": metric,
            "n": len(refs),
            "rank_set": rank_set,
            "clustered": groups_of is not None,
            "models": sorted(rows, key=lambda row: (row["rank"], row["model"])),
            "best": [names[m] for m, row in enumerate(rows) if row["best"]],
            "groups": [[names[m] for m in group] for group in groups],
            "pairs": [{"a": names[i], "b": names[j], **test} for (i, j), test in tests.items()],
            "detectable": detectable,
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
                    *_interval_cells(row["ci"]),
                    row["rank"],
                    row["interval"][0],
                    row["interval"][1],
                    "yes" if row["best"] else "no",
                    row["groups"],
                ]
            )
    metric = next(iter(result.values()))["metric"] if result else DEFAULT_METRIC
    return Table(f"Leaderboard ({metric.replace('_', ' ')}, %)", table_columns(metric), rows)


NO_VARIATION = "no variation"
"""The interval cells of a score whose resamples all gave the same value (no interval)."""


def _interval_cells(ci: Sequence[float]) -> list[Any]:
    """CI low and high in %, or :data:`NO_VARIATION` twice for an interval of width 0."""
    if formulas.no_variation(ci):
        return [NO_VARIATION, NO_VARIATION]
    return [100 * ci[0], 100 * ci[1]]


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
        "may be best",
        "tied group",
    ]


def markdown_section(result: dict[str, Any], resamples: int, seed: int) -> str:
    """The leaderboard as a Markdown section: table, best set, tied groups, detectable
    differences, a warning for small tasks."""
    from ..tables import markdown

    first = next(iter(result.values()), {})
    metric = first.get("metric", DEFAULT_METRIC)
    kind = first.get("rank_set", RANK_SETS[0])
    methods = {row.get("rank_method") for board in result.values() for row in board["models"]}
    method = (
        f"critical values from {resamples} random permutations of the runs within each "
        "datapoint, exact for equal runs at any n"
        if methods == {"permutation"}
        else f"critical values from {resamples} resamples of the datapoints drawn jointly for "
        "all runs"
        + (" (clustered tasks), else from as many permutations" if "permutation" in methods else "")
    )
    held = (
        "all rank sets hold together with probability 95%"
        if kind == RANK_SETS[0]
        else "each rank set holds on its own with probability 95%, not all together"
    )
    lines = [
        f"## Leaderboard with {kind} rank sets ({metric.replace('_', ' ')})",
        "",
        "Per task: the score with its 95% interval (percentile bootstrap, 'no variation' where "
        "every resample gave the same value; for set accuracy the Clopper-Pearson exact "
        f"interval, the one results.json gives), the rank (1 = best) with its 95% "
        f"{kind} confidence set for the rank (Mogstad, Romano, Shaikh & Wilhelm 2024, step-down "
        f"over the paired t-statistics of every pair of runs; {held}; {method}, seed {seed}), "
        "whether a run may be the best "
        "(the 95% confidence set for the best run), and tied groups: runs in score order of "
        "which the simultaneous step-down separates no pair share a letter. Values in %.",
        "",
        markdown(leaderboard_table(result)),
        "",
    ]
    for task, board in result.items():
        d = board["detectable"]
        groups = "; ".join(
            f"{group_label(g)}: " + ", ".join(members) for g, members in enumerate(board["groups"])
        )
        adjacent = ", ".join(
            f"{p['a']} vs {p['b']} {_points(p['mde'])}" for p in d.get("adjacent", [])
        )
        detectable = (
            f"Smallest detectable difference {_points(d['mde'])} = (z(0.975) + z(0.8)) × sd / √n "
            f"with sd {_points(d['sd'])} of the per-datapoint paired differences (alpha "
            f"{d['alpha']}, power {d['power']}, root mean square over all pairs)"
            if d["mde"] == d["mde"]
            else "Smallest detectable difference undefined (the runs' paired differences do not "
            "vary)"
        )
        lines.append(
            f"- {task_label(task)} (n = {board['n']}): may be best: {', '.join(board['best'])}. "
            f"Tied groups {groups}. {detectable}"
            + (
                f"; per adjacent pair at the corrected alpha {d['alpha_corrected']:.3g}: "
                f"{adjacent}."
                if adjacent
                else "."
            )
        )
        if board.get("clustered"):
            lines.append(
                f"- {task_label(task)}: resamples drew whole clusters of datapoints (the "
                "caption sets of one predicate), not single datapoints."
            )
        if board["n"] < SMALL_N:
            lines.append(
                f"- Warning: {task_label(task)} has {board['n']} datapoints (fewer than "
                f"{SMALL_N}): bootstrap intervals are rough and most differences undetectable."
            )
    return "\n".join(lines) + "\n"


def _points(value: float) -> str:
    """A proportion in points (NaN: undefined)."""
    return "undefined" if value != value else f"{100 * value:.2f} points"


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
        # (a percentile interval need not hold the value itself: no negative error bar)
        low = [max(0.0, 100 * (m["value"] - m["ci"][0])) for m in models]
        high = [max(0.0, 100 * (m["ci"][1] - m["value"])) for m in models]
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
    kind = next(iter(result.values()))["rank_set"]
    figure.suptitle(f"Scores with 95% CIs; rank [{kind} rank set] tied group", fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()
