"""``bla-eval robustness RUN [RUN ...]``: how much the scores of finished runs depend on the prompt
and on the image.

For each run scored with ``--prompts`` (a sweep): the metric of each template with its 95%
bootstrap interval, Cochran's Q test that the templates differ, the range (best - worst) with a
bootstrap of the range, the templates that may be the best (a simultaneous 95% set) and the order
of the tasks with the share of resamples that keep it. For each run scored with ``--control``:
the image gain per task with its paired interval and the outcome of the equivalence test (helps,
hurts, equivalent within the margin: answers from priors, inconclusive), beside the text-only
baseline when a run of the ``text`` kind is among the runs; ``--margin`` recomputes the gains
with another margin. With sweeps of two or more models: Kendall's tau between the model rankings
of each pair of templates, with the share of resamples keeping its sign. For each run scored
with ``--score caption-pmi``: how often the prior correction reverses the likelihood's choice,
per task. The numbers are those
``results.json`` holds (``bla_eval.conditions``), the resampled tau's are computed from the
runs' records; the formulas are ``bla_metric.stats.robustness``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass
from statistics import fmean
from typing import Any

from bla_metric import formulas
from bla_metric.stats import robustness, significance

from ..benchmarks import get_benchmark
from ..cli_common import command_parser, option, run_guarded
from ..tables import Table, markdown

RESAMPLES = 2000
"""Bootstrap resamples of the text-only baseline's interval."""


NO_VARIATION = "inconclusive (no variation)"
"""What a report prints for a bootstrap whose resamples all gave the same value."""


def _pct(value: float) -> str:
    return "undefined" if value != value else f"{100 * value:.2f}"


def _ci(ci: Sequence[float]) -> str:
    """An interval, or "(no variation)" for one of width 0 (never a confident point)."""
    if formulas.no_variation(ci):
        return "(no variation)"
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _label(task: str, results: Mapping[str, Any]) -> str:
    return get_benchmark(str(results.get("benchmark") or "bla")).task_label(task)


def may_be_best(sensitivity: Mapping[str, Any]) -> list[str]:
    """The templates that may be the best of one task's sensitivity (``may_be_best``; an older
    run's bootstrap set, ``indistinguishable_from_best``, where it has no other)."""
    found = sensitivity.get("may_be_best", sensitivity.get("indistinguishable_from_best"))
    return list(found or [])


def sensitivity_table(results: Mapping[str, Any]) -> str:
    """The sweep of one run as Markdown ('' for a run without one)."""
    sweep = results.get("sensitivity")
    if not sweep:
        return ""
    tasks = list(sweep["tasks"])
    first = sweep["tasks"][tasks[0]]
    metric = first["metric"].replace("_", " ")
    lines = [
        f"Prompt sensitivity of **{results['model']}** ({metric}, %, 95% bootstrap interval)",
        "",
    ]
    rows = []
    for template in first["templates"]:
        cells = []
        for task in tasks:
            entry = sweep["tasks"][task]["templates"][template]
            tied = template in may_be_best(sweep["tasks"][task])
            mark = " *" if tied else ""
            cells.append(f"{_pct(entry['value'])} {_ci(entry['ci'])}{mark}")
        rows.append([template, *cells])
    spreads = [
        f"{_pct(sweep['tasks'][t]['spread']['value'])} {_ci(sweep['tasks'][t]['spread']['ci'])}"
        for t in tasks
    ]
    rows.append(["range (best - worst)", *spreads])
    columns = ["template", *(_label(t, results) for t in tasks)]
    lines.append(markdown(Table("", columns, rows)))
    tests = []
    for t in tasks:
        test = sweep["tasks"][t].get("omnibus")
        if test and test["statistic"] != test["statistic"]:  # NaN: no datapoint's outcome varies
            tests.append(
                f"{_label(t, results)}: undefined (no datapoint's set accuracy differs between "
                "templates: no evidence either way)"
            )
        elif test:
            verdict = "differ" if test["templates_matter"] else "not shown to differ"
            tests.append(
                f"{_label(t, results)}: Q = {test['statistic']:.2f}, df {test['df']}, "
                f"p = {test['p_value']:.3g} ({verdict})"
            )
    lines.append("")
    if tests:
        lines.append(
            "Do the templates matter? Cochran's Q on set accuracy (one 0/1 outcome per datapoint "
            "and template, alpha 0.05): " + "; ".join(tests) + "."
        )
    order = sweep["task_order"]
    changes = "changes" if order["changes"] else "does not change"
    recurs = order.get("recurs")
    kept = (
        f" (every template keeps its observed order in {100 * recurs:.0f}% of bootstrap "
        "resamples; a description, not a test)"
        if recurs is not None and recurs == recurs
        else ""
    )
    lines += [
        "",
        "\\* may be the task's best template (95% confidence set for the best, simultaneous over "
        "all pairs of templates). The range's interval is a bootstrap of the range itself (best "
        "minus worst of each resample): it reaches above 0 even when the templates are equal, "
        f"so Cochran's Q answers whether they differ. The order of the tasks {changes} across "
        f"templates{kept}.",
    ]
    return "\n".join(lines)


def gain_table(results: Mapping[str, Any], baseline: Mapping[str, Any] | None = None) -> str:
    """The image gain of one run as Markdown ('' for a run without a control); ``baseline``:
    task -> {"value", "ci"} of a text-only run on the same datapoints."""
    control = results.get("control")
    if not control:
        return ""
    tasks = list(control["tasks"])
    metric = control["tasks"][tasks[0]]["image_gain"]["metric"].replace("_", " ")
    columns = ["task", "real image", "control", "image gain [95% CI]", "90% CI", "outcome"]
    columns += ["text-only baseline"] if baseline else []
    lines = [
        f"Image gain of **{results['model']}** against the {control['kind']} control "
        f"({metric}, %, paired bootstrap)",
        "",
    ]
    rows = []
    for task in tasks:
        gain = control["tasks"][task]["image_gain"]
        row = [_label(task, results), _pct(gain["real"]), _pct(gain["control"])]
        row += [f"{_pct(gain['gain'])} {_ci(gain['ci'])}", _ci(gain["equivalence_ci"])]
        row.append(gain_outcome(gain))
        if baseline:
            text = baseline.get(task)
            row.append(f"{_pct(text['value'])} {_ci(text['ci'])}" if text else "–")
        rows.append(row)
    lines.append(markdown(Table("", columns, rows)))
    margin = _pct(control["tasks"][tasks[0]]["image_gain"]["margin"])
    lines += [
        "",
        "Outcome: *helps* / *hurts* when the 95% interval of the gain lies above / below 0; "
        f"*equivalent* when the 90% interval lies within ±{margin} points (two one-sided tests at "
        "0.05: the image makes no difference beyond the margin, the model answers from priors); "
        "*inconclusive* otherwise (the data cannot tell).",
    ]
    if control["answers_from_priors"] and all(
        from_priors(control["tasks"][t]["image_gain"]) for t in tasks
    ):
        lines += ["", f"The gain is within ±{margin} points on every task: answers from priors."]
    return "\n".join(lines)


OUTCOMES = {
    "helps": "helps",
    "hurts": "hurts",
    "equivalent": "equivalent: answers from priors",
    "inconclusive": "inconclusive",
}


def gain_outcome(gain: Mapping[str, Any]) -> str:
    """The printed outcome of one image gain: :data:`NO_VARIATION` when its resamples did not
    vary (``variation`` False; an older run's interval of width 0), whatever its stored outcome
    (an older run could hold "equivalent" from an interval [0, 0]), else :data:`OUTCOMES`'."""
    if not gain.get("variation", not formulas.no_variation(gain["ci"])):
        return NO_VARIATION
    return OUTCOMES[gain["outcome"]]


def from_priors(gain: Mapping[str, Any]) -> bool:
    """Whether one image gain says "answers from priors" (never without variation)."""
    return bool(gain["from_priors"]) and gain_outcome(gain) != NO_VARIATION


def with_margin(run: Any, margin: float) -> dict[str, Any]:
    """The run's results with the headline image gains recomputed at the equivalence ``margin``
    (from its records)."""
    results = dict(run.results)
    control = dict(results["control"])
    tasks = {}
    for task, entry in control["tasks"].items():
        recs = sorted(run.records[task], key=lambda r: str(r["id"]))
        metric = entry["image_gain"]["metric"]
        gain = robustness.image_gain(
            [r["scores"] for r in recs],
            [r["control"]["scores"] for r in recs],
            [r["labels"] for r in recs],
            metric,
            resamples=RESAMPLES,
            margin=margin,
        )
        tasks[task] = {**entry, "image_gain": gain}
    control["tasks"] = tasks
    control["answers_from_priors"] = all(t["image_gain"]["from_priors"] for t in tasks.values())
    results["control"] = control
    return results


def baseline_of(records: Mapping[str, Sequence[Mapping[str, Any]]], metric: str) -> dict:
    """Per task, the ranking ``metric`` of a run's headline scores with its bootstrap interval."""
    out = {}
    for task, recs in records.items():
        result = formulas.compute(
            [r["scores"] for r in recs], [r["labels"] for r in recs], bootstrap=RESAMPLES
        )
        out[task] = {"value": result[metric], "ci": result["ci"][metric]}
    return out


def agreement_table(
    sweeps: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Sequence[Mapping[str, Any]]]] | None = None,
) -> str:
    """Kendall's tau between the model rankings of each pair of templates, from the sweeps of
    several models (each model's metric: the mean over the tasks every run has); with the runs'
    ``records`` (same datapoints, in the order of ``sweeps``), the share of resamples keeping
    tau's sign."""
    if records is not None:
        records = [r for s, r in zip(sweeps, records, strict=True) if s.get("sensitivity")]
    sweeps = [s for s in sweeps if s.get("sensitivity")]
    if len(sweeps) < 2:
        return ""
    tasks = [
        t
        for t in sweeps[0]["sensitivity"]["tasks"]
        if all(t in s["sensitivity"]["tasks"] for s in sweeps)
    ]
    templates = [
        t
        for t in sweeps[0]["sensitivity"]["tasks"][tasks[0]]["templates"]
        if all(t in s["sensitivity"]["tasks"][tasks[0]]["templates"] for s in sweeps)
    ]
    values = {
        template: {
            f"{s['model']} ({k})": fmean(
                s["sensitivity"]["tasks"][t]["templates"][template]["value"] for t in tasks
            )
            for k, s in enumerate(sweeps, 1)
        }
        for template in templates
    }
    draws = None
    if records is not None:
        metric = sweeps[0]["sensitivity"]["tasks"][tasks[0]]["metric"]
        draws = {template: {} for template in templates}
        for k, (s, recs) in enumerate(zip(sweeps, records, strict=True), 1):
            for template, mean in _template_draws(recs, tasks, templates, metric).items():
                draws[template][f"{s['model']} ({k})"] = mean
    agreement = robustness.ranking_agreement(values, draws)
    lines = [
        f"Kendall's tau between the rankings of {len(agreement['models'])} models by each pair "
        "of templates (mean over the tasks)"
        + (f", with the share of {RESAMPLES} resamples keeping its sign" if draws else ""),
        "",
    ]
    rows = []
    for pair in agreement["pairs"]:
        kept = pair.get("sign_recurs")
        cell = [] if kept is None else (["–"] if kept != kept else [f"{100 * kept:.0f}%"])
        tau = "undefined" if pair["tau"] != pair["tau"] else f"{pair['tau']:.3f}"
        rows.append([str(pair["a"]), str(pair["b"]), tau, *cell])
    columns = ["template A", "template B", "tau"] + (["sign kept"] if draws else [])
    lines.append(markdown(Table("", columns, rows)))
    return "\n".join(lines)


def _template_draws(
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    tasks: Sequence[str],
    templates: Sequence[str],
    metric: str,
) -> dict[str, Any]:
    """Per template, the ranking ``metric`` on bootstrap resamples (seed 0, datapoints in id
    order, so runs of the same datapoints share the draws), averaged over ``tasks``."""
    total: dict[str, Any] = {}
    for task in tasks:
        recs = sorted(records[task], key=lambda r: str(r["id"]))
        labels = [r["labels"] for r in recs]
        stats = [
            significance.datapoint_stats([r["prompts"][t] for r in recs], labels) for t in templates
        ]
        for template, draw in zip(
            templates, formulas.resampled("ranking", stats, RESAMPLES, 0), strict=True
        ):
            total[template] = total.get(template, 0) + draw[metric] / len(tasks)
    return total


def tables(results: Mapping[str, Any]) -> str:
    """The sensitivity and image-gain tables of one run ('' for a plain run)."""
    return "\n\n".join(t for t in (sensitivity_table(results), gain_table(results)) if t)


def _protocol(results: Mapping[str, Any]) -> Mapping[str, Any]:
    protocol = results.get("protocol")
    return protocol if isinstance(protocol, Mapping) else {}


def prior_table(run: Any) -> str:
    """How often a ``caption-pmi`` run's prior correction reverses the likelihood's choice of
    the true sentences, per task (``bla_metric.likelihood.reversal_rate``)."""
    from bla_metric.likelihood import reversal_rate

    alpha = _protocol(run.results).get("pmi_alpha")
    lines = [
        f"Prior correction of {run.path} (--score caption-pmi, alpha {alpha}): share of "
        "datapoints whose top-ranked sentences change from log P(t | i) to its PMI",
        "",
    ]
    rows = []
    for task, records in run.records.items():
        cond = [r["log_p_image"] for r in records]
        prior = [r["log_p_prior"] for r in records]
        labels = [r["labels"] for r in records]
        rate = reversal_rate(cond, prior, alpha, labels)
        rows.append([_label(task, run.results), str(len(records)), _pct(rate)])
    lines.append(markdown(Table("", ("task", "n", "reversed (%)"), rows)))
    return "\n".join(lines)


def _ids(run: Any) -> dict[str, list[str]]:
    """The datapoint ids of a run, per task."""
    return {t: [str(r["id"]) for r in recs] for t, recs in run.records.items()}


def missing_baseline(run: Any, text_runs: int) -> str:
    """The line that says why a control run's table has no text-only baseline column."""
    why = (
        f"none of the {text_runs} run(s) of the `text` kind given scored the same datapoints"
        if text_runs
        else "no run of the `text` kind is among the runs given"
    )
    return (
        f"No text-only baseline column for {run.path}: {why} (add one with the same --tasks "
        "and --limit, e.g. of --model smollm2)."
    )


def report(paths: Sequence[str], margin: float | None = None) -> str:
    """The Markdown report over finished runs (see the module's description); ``margin``: the
    equivalence margin of the image gains (None: the one results.json holds)."""
    from .rundata import load_run

    runs = [load_run(p) for p in paths]
    text_runs = [r for r in runs if r.results.get("kind") == "text" and "control" not in r.results]
    blocks = []
    for run in runs:
        if run.results.get("sensitivity"):
            blocks.append(sensitivity_table(run.results))
        if run.results.get("control"):
            baseline = None
            for text in text_runs:
                if _ids(text) == _ids(run):
                    metric = next(iter(run.results["control"]["tasks"].values()))["image_gain"]
                    baseline = baseline_of(text.records, metric["metric"])
                    break
            results = run.results if margin is None else with_margin(run, margin)
            blocks.append(gain_table(results, baseline))
            if baseline is None:
                blocks.append(missing_baseline(run, len(text_runs)))
        if _protocol(run.results).get("score") == "caption-pmi":
            blocks.append(prior_table(run))
    sweeps = [r for r in runs if r.results.get("sensitivity")]
    for other in sweeps[1:]:
        if _ids(other) != _ids(sweeps[0]):
            raise ValueError(
                f"{other.path} and {sweeps[0].path} are sweeps of different datapoints: their "
                "model rankings cannot be compared (run both with the same --tasks and --limit)"
            )
    blocks.append(agreement_table([r.results for r in sweeps], [r.records for r in sweeps]))
    blocks = [b for b in blocks if b]
    if not blocks:
        raise ValueError(
            "no run among the given ones was scored with --prompts, --control or --score "
            "caption-pmi: nothing to report"
        )
    return "\n\n".join(blocks) + "\n"


def _margin(text: str) -> float:
    """A margin in points, 0 < margin < 100 (argparse type)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"expected points above 0 and below 100, got {text!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class RobustnessOptions:
    """The options of ``bla-eval robustness``."""

    runs: tuple[str, ...] = option(MISSING, "folders of finished bla-eval runs", flag="runs")
    margin: float | None = option(
        help="equivalence margin of the image gain in points, above 0 and below 100 (default "
        f"{100 * robustness.EQUIVALENCE_MARGIN:g}: a gain within it is no gain)",
        type=_margin,
    )


def main(argv: list[str] | None = None) -> int:
    """``bla-eval robustness RUN [RUN ...]``."""
    p = command_parser(
        "bla-eval robustness",
        "Prompt sensitivity, image gain and ranking agreement of finished runs "
        "scored with --prompts or --control.",
        RobustnessOptions,
    )
    args = p.parse_args(argv)

    def body() -> int:
        margin = None if args.margin is None else args.margin / 100
        print(report(args.runs, margin), end="")
        return 0

    return run_guarded(body, args.debug, "bla-eval robustness")
