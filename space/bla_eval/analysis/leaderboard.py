"""A leaderboard with statistics over any number of runs on the same datapoints.

Per task, on a ranking-view metric (sentence accuracy by default, or set accuracy): each run's score
with its 95% interval (percentile bootstrap; Clopper-Pearson's for set accuracy, as in
results.json), its rank with a 95% confidence set for it (simultaneous over all runs by default,
marginal on request; critical values from permutations of the runs within each datapoint, or
from clusters of datapoints resampled jointly for all runs), the confidence set for the best
run, the groups of runs the simultaneous step-down does not separate (no significant
difference, which is no evidence of equivalence), the paired bootstrap tests of every pair
(Holm-corrected) and the smallest difference the task's datapoints can detect (paired test, power
0.8; per adjacent pair at the corrected level). The formulas are in
:mod:`bla_metric.stats.ranks`; this module builds the report, the table and the plot.

Any benchmark: the metrics it may rank by and the per-item statistics it ranks with come from its
spec (``Benchmark.ranked_metrics``, ``Benchmark.paired_stats``). Runs with a control image
(``--control``) are ranked by their image gain (the metric with the real image minus with the
control image, per item, paired across runs), the real-image metric beside it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bla_metric import formulas
from bla_metric.likelihood import LIKELIHOOD_SCORES
from bla_metric.stats import rank_power, ranks, significance

from ..benchmarks import Benchmark, get_benchmark
from ..benchmarks.bla import LEADERBOARD_METRICS
from ..conditions import CONTROL
from ..runs.check import is_probabilistic
from ..tables import Table, group_label, group_marks, plain
from .rundata import Run

METRICS = LEADERBOARD_METRICS
"""The metrics a BLA leaderboard ranks by (higher is better); other benchmarks: their spec's
``ranked_metrics``."""
DEFAULT_METRIC = METRICS[0]
GAIN = "image_gain"
"""What a leaderboard of runs with a control image ranks: the metric's image gain."""
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


def benchmark_of(runs: Sequence[Run]) -> Benchmark:
    """The benchmark every run scored (ValueError naming a run of another)."""
    names = [str(run.results.get("benchmark") or "bla") for run in runs]
    for name, run in zip(names, runs, strict=True):
        if name != names[0]:
            raise ValueError(
                f"{run.path} is a run of {name!r}, {runs[0].path} of {names[0]!r}: a leaderboard "
                "ranks runs of one benchmark"
            )
    return get_benchmark(names[0])


def control_of(runs: Sequence[Run]) -> str | None:
    """The control image kind every run scored beside the real one (``--control``), else None
    (also when the runs differ in it: their real-image metric is ranked)."""
    kinds = {
        str(records[0][CONTROL].get("kind")) if records and CONTROL in records[0] else None
        for run in runs
        for records in run.records.values()
    }
    return next(iter(kinds)) if len(kinds) == 1 else None


def _control_view(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with the control image's scores as their scores."""
    keep = ("task", "id", "labels", "caption_types")
    return [{**{k: r[k] for k in keep if k in r}, "scores": r[CONTROL]["scores"]} for r in records]


def _gain_stats(
    bench: Benchmark, run: Run, task: str, metric: str, real: tuple[str, dict]
) -> tuple[dict[str, np.ndarray], float]:
    """({GAIN: per-item gain}, the control's metric) of one run's task: the per-item values of
    ``metric`` (:func:`bla_metric.stats.ranks.datapoint_values`) with the real image minus with the
    control image; their mean is the gain of the metric."""
    mode, stats = real
    _, control = bench.paired_stats(_control_view(run.records[task]), is_probabilistic(run.results))
    real_values = ranks.datapoint_values(mode, metric, stats)
    control_values = ranks.datapoint_values(mode, metric, control)
    return {GAIN: real_values - control_values}, significance.aggregate(mode, control)[metric]


def leaderboard(
    runs: Sequence[Run],
    resamples: int = 2000,
    seed: int = 0,
    metric: str | None = None,
    rank_set: str = RANK_SETS[0],
    clusters: Mapping[str, Sequence[Any] | None] | None = None,
) -> dict[str, Any]:
    """{task: {"metric", "n", "rank_set", "models": [per run: label, value, ci, rank, interval,
    best, groups], "best": [labels], "groups": [[labels]], "pairs": [{a, b, difference,
    p_value, p_holm}], "detectable": {...}}} for runs of one benchmark already checked to score
    the same datapoints, ranked by ``metric`` (one of the benchmark's ``ranked_metrics``; None:
    its default); ``interval`` is the rank set of kind ``rank_set``, ``best`` and the groups
    come from the simultaneous sets. ``clusters``: per task one label per datapoint (in the
    runs' record order) for a cluster bootstrap, or None; ``clustered`` says whether a task's
    resamples drew clusters. Runs with one control image kind are ranked by the image gain:
    each task then has ``control`` (the kind) and each row ``headline`` (the real-image value
    and interval) and ``control`` (the control image's value); ``value`` and ``ci`` are the
    gain's."""
    bench = benchmark_of(runs)
    metric = metric or bench.ranked_metrics[0]
    if metric not in bench.ranked_metrics:
        raise ValueError(
            f"--metric {metric!r}: a {bench.label} leaderboard ranks by "
            f"{', '.join(bench.ranked_metrics)}"
        )
    if rank_set not in RANK_SETS:
        raise ValueError(f"--rank-sets {rank_set!r}: expected one of {', '.join(RANK_SETS)}")
    names = labels(runs)
    control = control_of(runs)
    out: dict[str, Any] = {}
    for task in runs[0].tasks:
        paired = [
            bench.paired_stats(run.records[task], is_probabilistic(run.results)) for run in runs
        ]
        mode, stats = paired[0][0], [s for _, s in paired]
        groups_of = (clusters or {}).get(task)
        rank_mode, ranked, share, extra = mode, metric, None, None
        if control is not None:
            real = ranks.rank_intervals(stats, mode, metric, resamples, seed, clusters=groups_of)
            gains = [
                _gain_stats(bench, run, task, metric, p)
                for run, p in zip(runs, paired, strict=True)
            ]
            stats, rank_mode, ranked, share = [g for g, _ in gains], formulas.MEAN, GAIN, False
            extra = [
                {"headline": {"value": r["value"], "ci": r["ci"]}, "control": c}
                for r, (_, c) in zip(real, gains, strict=True)
            ]
        rows = ranks.rank_intervals(
            stats,
            rank_mode,
            ranked,
            resamples,
            seed,
            kind=rank_set,
            clusters=groups_of,
            share=share,
        )
        tests = ranks.pairwise_tests(stats, rank_mode, ranked, resamples, seed, groups_of)
        groups = ranks.rank_set_groups(
            [row["value"] for row in rows], [row.pop("shown_better_than") for row in rows]
        )
        detectable = ranks.detectable_difference(stats, rank_mode, ranked)
        power = run_power(stats, rank_mode, ranked, rows)
        for pair in detectable["adjacent"]:
            pair["a"], pair["b"] = names[pair["a"]], names[pair["b"]]
        for m, row in enumerate(rows):
            row["model"] = names[m]
            row["groups"] = group_marks(
                (g for g, members in enumerate(groups) if m in members), len(groups)
            )
            row.update(extra[m] if extra else {})
        out[task] = {
            "metric": metric,
            "n": len(runs[0].records[task]),
            "rank_set": rank_set,
            "clustered": groups_of is not None,
            **({"control": control} if control is not None else {}),
            "models": sorted(rows, key=lambda row: (row["rank"], row["model"])),
            "best": [names[m] for m, row in enumerate(rows) if row["best"]],
            "groups": [[names[m] for m in group] for group in groups],
            "pairs": [{"a": names[i], "b": names[j], **test} for (i, j), test in tests.items()],
            "detectable": detectable,
            "power": power,
        }
    return out


def run_power(
    stats: Sequence[dict[str, np.ndarray]], mode: str, metric: str, rows: Sequence[dict]
) -> dict[str, float] | None:
    """The lead these runs' rank sets find (:func:`bla_metric.stats.rank_power.lead_for_runs` on
    their own per-datapoint values), or None where it makes no claim: rank sets not from
    permutations within datapoints (clusters, the bootstrap), or beyond its table."""
    if {row.get("rank_method") for row in rows} != {"permutation"}:
        return None
    values = np.stack([ranks.per_datapoint(mode, metric, s) for s in stats])
    return rank_power.lead_for_runs(values, formulas.is_share(values))


def task_label(config: str, benchmark: str = "bla") -> str:
    """The short name of a task in tables and plots (BLA: AP, CO, RC)."""
    return get_benchmark(benchmark).task_label(config)


def leaderboard_table(result: dict[str, Any], benchmark: str = "bla") -> Table:
    """One row per (task, model), one number per cell, values in %; a control's leaderboard has
    the real-image metric, the control's and the image gain with their intervals."""
    rows = []
    for task, board in result.items():
        for row in board["models"]:
            shown = [100 * row["value"], *_interval_cells(row["ci"])]
            if "control" in board:
                head = row["headline"]
                shown = [
                    100 * head["value"],
                    *_interval_cells(head["ci"]),
                    100 * row["control"],
                    *shown,
                ]
            rows.append(
                [
                    task_label(task, benchmark),
                    row["model"],
                    *shown,
                    row["rank"],
                    row["interval"][0],
                    row["interval"][1],
                    "yes" if row["best"] else "no",
                    row["groups"],
                ]
            )
    first = next(iter(result.values()), {})
    metric = first.get("metric", DEFAULT_METRIC)
    control = first.get("control")
    title = f"Leaderboard ({metric.replace('_', ' ')}, %)"
    if control:
        title = f"Leaderboard of the image gain ({metric.replace('_', ' ')}, {control} control, %)"
    return Table(title, table_columns(metric, control), rows)


NO_VARIATION = "no variation"
"""The interval cells of a score whose resamples all gave the same value (no interval)."""


def _interval_cells(ci: Sequence[float]) -> list[Any]:
    """CI low and high in %, or :data:`NO_VARIATION` twice for an interval of width 0."""
    if formulas.no_variation(ci):
        return [NO_VARIATION, NO_VARIATION]
    return [100 * ci[0], 100 * ci[1]]


def table_columns(metric: str = DEFAULT_METRIC, control: str | None = None) -> list[str]:
    """The columns of :func:`leaderboard_table` for a leaderboard ranked by ``metric`` (with a
    ``control``: by its image gain)."""
    name = metric.replace("_", " ")
    values = [name, "CI low", "CI high"]
    if control:
        values += [f"{control} control", "image gain", "gain CI low", "gain CI high"]
    return [
        "task",
        "model",
        *values,
        "rank",
        "rank low",
        "rank high",
        "may be best",
        "not separated",
    ]


RANK_METHOD_TEXT = {
    "permutation": "from {resamples} random permutations of the runs within each datapoint, "
    "exact for equal runs at any n",
    "cluster sign flip": "of clustered tasks from {resamples} random sign flips of whole "
    "clusters of datapoints (a wild cluster bootstrap with the null imposed: each cluster's "
    "paired differences keep or change their sign together), which needs no exchangeable runs",
    "bootstrap": "from {resamples} resamples of the datapoints drawn jointly for all runs",
}
"""How the report names each method of :data:`bla_metric.stats.ranks.RANK_METHODS`."""


def markdown_section(
    result: dict[str, Any], resamples: int, seed: int, benchmark: str = "bla"
) -> str:
    """The leaderboard as a Markdown section: table, best set, groups not separated, detectable
    differences, a warning for small tasks."""
    from ..tables import markdown

    first = next(iter(result.values()), {})
    metric = first.get("metric", DEFAULT_METRIC)
    kind = first.get("rank_set", RANK_SETS[0])
    control = first.get("control")
    shares = (  # one wording for every benchmark: a sweep prints the paragraph once
        "for a share of items (each item 0 or 1, as BLA's set accuracy) the Clopper-Pearson exact "
        "interval"
    )
    title = f"## Leaderboard with {kind} rank sets ({metric.replace('_', ' ')})"
    gain = ""
    if control:
        title = (
            f"## Leaderboard of the image gain with {kind} rank sets ({metric.replace('_', ' ')}: "
            f"real image minus {control} control)"
        )
        gain = (
            f"\n\nRanked by the image gain: per datapoint the {metric.replace('_', ' ')} with the "
            f"real image minus with the {control} control image, the runs paired on each "
            "datapoint; its interval is the percentile bootstrap's. Beside it the real-image "
            "score with its interval and the control's score."
        )
    methods = {row.get("rank_method") for board in result.values() for row in board["models"]}
    method = "; ".join(
        f"critical values {described}".format(resamples=resamples)
        for name, described in RANK_METHOD_TEXT.items()
        if name in methods
    )
    held = (
        "all rank sets hold together with probability 95%"
        if kind == RANK_SETS[0]
        else "each rank set holds on its own with probability 95%, not all together"
    )
    lines = [
        title,
        "",
        "Per task: the score with its 95% interval (percentile bootstrap, 'no variation' where "
        f"every resample gave the same value; {shares}), the rank (1 = best) with its 95% "
        f"{kind} confidence set for the rank (Mogstad, Romano, Shaikh & Wilhelm 2024, step-down "
        f"over the paired t-statistics of every pair of runs; {held}; {method}, seed {seed}), "
        "whether a run may be the best "
        "(the 95% confidence set for the best run), and the groups not separated: runs in score "
        "order of which the simultaneous step-down separates no pair share a letter (no "
        "significant difference; not a test of equivalence). Values in %." + gain,
        "",
        markdown(leaderboard_table(result, benchmark)),
        "",
    ]
    for task, board in result.items():
        label = task_label(task, benchmark)
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
            f"- {label} (n = {board['n']}): may be best: {', '.join(board['best'])}. "
            f"Not separated (no significant difference) {groups}. {detectable}"
            + (
                f"; per adjacent pair at the corrected alpha {d['alpha_corrected']:.3g}: "
                f"{adjacent}."
                if adjacent
                else "."
            )
        )
        power = power_line(board)
        if power:
            lines.append(f"- {label}: {power}")
        if board.get("clustered"):
            lines.append(
                f"- {label}: clustered by predicate: the scores' intervals resample whole "
                "predicates and the rank sets flip the signs of whole predicates' "
                "differences, not single datapoints'."
            )
        if board["n"] < SMALL_N:
            lines.append(
                f"- Warning: {label} has {board['n']} datapoints (fewer than "
                f"{SMALL_N}): bootstrap intervals are rough and most differences undetectable."
            )
    return "\n".join(lines) + "\n"


def power_line(board: dict[str, Any]) -> str | None:
    """How large a lead the task's rank sets find (the board's ``power``:
    :func:`run_power`), or None where there is none."""
    found = board.get("power")
    if not found:
        return None
    runs, n = len(board["models"]), board["n"]
    return (
        f"power: a run ahead of each of the other {runs - 1} by {100 * found['lead']:.1f} points "
        f"is alone at rank 1 (rank set [1, 1]) in {100 * rank_power.POWER:g}% of simulated "
        f"benchmarks (standardised lead {found['lambda']:.2f} × sd {_points(found['sd'])} / √n "
        f"with n = {n}, {simulated_design(runs, n)}; sd the largest over pairs "
        "of these runs' per-datapoint differences with the leader's lead in place: python -m "
        "bla_eval.simulations.coverage --tables power,power-check); smaller leads mostly leave "
        "the runs not separated."
    )


def simulated_design(runs: int, n: int) -> str:
    """Which simulated design the standardised lead of ``runs`` runs on ``n`` datapoints comes
    from (:func:`bla_metric.rank_power.tabled`): the same, or the nearest tabled one on the safe
    side (at least as many runs, at most as many datapoints: a lead at least as large)."""
    table_runs, table_n = rank_power.tabled(runs, n) or (runs, n)
    if (table_runs, table_n) == (runs, n):
        return f"simulated for {runs} runs on {n} datapoints"
    return (
        f"simulated for {table_runs} runs on {table_n} datapoints, the design nearest to these "
        f"{runs} runs on {n} that needs a lead at least as large"
    )


def _points(value: float) -> str:
    """A proportion in points (NaN: undefined)."""
    return "undefined" if value != value else f"{100 * value:.2f} points"


def _short(name: str, width: int = 28) -> str:
    """A label cut to ``width`` characters (the plot's axis keeps its room)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def leaderboard_figure(result: dict[str, Any], benchmark: str = "bla") -> bytes:
    """PNG: per task, each run's score (a control's leaderboard: image gain) with its 95%
    interval, labelled with rank and rank interval; runs best first."""
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
        name = board["metric"].replace("_", " ")
        axis.set_xlabel(f"image gain of {name} (points)" if "control" in board else f"{name} (%)")
        axis.set_title(f"{task_label(task, benchmark)} (n = {board['n']})", fontsize=10)
        axis.grid(axis="x", alpha=0.3)
    kind = next(iter(result.values()))["rank_set"]
    figure.suptitle(f"Scores with 95% CIs; rank [{kind} rank set] not-separated group", fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()
