"""``bla-eval robustness RUN [RUN ...]``: how much the scores of finished runs depend on the prompt
and on the image.

For each run scored with ``--prompts`` (a sweep): the metric of each template with its 95%
bootstrap interval, the spread (best - worst), the templates indistinguishable from the best and
whether the order of the tasks changes. For each run scored with ``--control``: the image gain
per task with its paired interval, beside the text-only baseline when a run of the ``text`` kind
is among the runs, and the flag of a model that answers from priors. With sweeps of two or more
models: Kendall's tau between the model rankings of each pair of templates. The numbers are those
``results.json`` holds (``bla_eval.conditions``); the formulas are ``bla_metric.robustness``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from bla_metric import formulas, robustness

from ..benchmarks import get_benchmark
from ..cli_common import OneLineParser, run_guarded

RESAMPLES = 2000
"""Bootstrap resamples of the text-only baseline's interval."""


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def _ci(ci: Sequence[float]) -> str:
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _label(task: str, results: Mapping[str, Any]) -> str:
    return get_benchmark(str(results.get("benchmark") or "bla")).task_label(task)


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
        "| template | " + " | ".join(_label(t, results) for t in tasks) + " |",
        "|---|" + "---|" * len(tasks),
    ]
    for template in first["templates"]:
        cells = []
        for task in tasks:
            entry = sweep["tasks"][task]["templates"][template]
            tied = template in sweep["tasks"][task]["indistinguishable_from_best"]
            mark = " *" if tied else ""
            cells.append(f"{_pct(entry['value'])} {_ci(entry['ci'])}{mark}")
        lines.append(f"| {template} | " + " | ".join(cells) + " |")
    spreads = [
        f"{_pct(sweep['tasks'][t]['spread']['value'])} {_ci(sweep['tasks'][t]['spread']['ci'])}"
        for t in tasks
    ]
    lines.append("| spread (best - worst) | " + " | ".join(spreads) + " |")
    order = sweep["task_order"]
    changes = "changes" if order["changes"] else "does not change"
    lines += [
        "",
        "\\* statistically indistinguishable from the task's best template. The order of the "
        f"tasks {changes} across templates.",
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
    head = "| task | real image | control | image gain [95% CI] | from priors |"
    rule = "|---|---|---|---|---|"
    if baseline:
        head, rule = head + " text-only baseline |", rule + "---|"
    lines = [
        f"Image gain of **{results['model']}** against the {control['kind']} control "
        f"({metric}, %, paired bootstrap)",
        "",
        head,
        rule,
    ]
    for task in tasks:
        gain = control["tasks"][task]["image_gain"]
        row = (
            f"| {_label(task, results)} | {_pct(gain['real'])} | {_pct(gain['control'])} | "
            f"{_pct(gain['gain'])} {_ci(gain['ci'])} | {'yes' if gain['from_priors'] else 'no'} |"
        )
        if baseline:
            text = baseline.get(task)
            row += f" {_pct(text['value'])} {_ci(text['ci'])} |" if text else " – |"
        lines.append(row)
    if control["answers_from_priors"]:
        lines += ["", "The image made no detectable difference on any task: answers from priors."]
    return "\n".join(lines)


def baseline_of(records: Mapping[str, Sequence[Mapping[str, Any]]], metric: str) -> dict:
    """Per task, the ranking ``metric`` of a run's headline scores with its bootstrap interval."""
    out = {}
    for task, recs in records.items():
        result = formulas.compute(
            [r["scores"] for r in recs], [r["labels"] for r in recs], bootstrap=RESAMPLES
        )
        out[task] = {"value": result[metric], "ci": result["ci"][metric]}
    return out


def agreement_table(sweeps: Sequence[Mapping[str, Any]]) -> str:
    """Kendall's tau between the model rankings of each pair of templates, from the sweeps of
    several models (each model's metric: the mean over the tasks every run has)."""
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
    agreement = robustness.ranking_agreement(values)
    lines = [
        f"Kendall's tau between the rankings of {len(agreement['models'])} models by each pair "
        "of templates (mean over the tasks)",
        "",
        "| template A | template B | tau |",
        "|---|---|---|",
    ]
    for pair in agreement["pairs"]:
        lines.append(f"| {pair['a']} | {pair['b']} | {pair['tau']:.3f} |")
    return "\n".join(lines)


def tables(results: Mapping[str, Any]) -> str:
    """The sensitivity and image-gain tables of one run ('' for a plain run)."""
    return "\n\n".join(t for t in (sensitivity_table(results), gain_table(results)) if t)


def _ids(run: Any) -> dict[str, list[str]]:
    """The datapoint ids of a run, per task."""
    return {t: [str(r["id"]) for r in recs] for t, recs in run.records.items()}


def report(paths: Sequence[str]) -> str:
    """The Markdown report over finished runs (see the module's description)."""
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
            blocks.append(gain_table(run.results, baseline))
    sweeps = [r for r in runs if r.results.get("sensitivity")]
    for other in sweeps[1:]:
        if _ids(other) != _ids(sweeps[0]):
            raise ValueError(
                f"{other.path} and {sweeps[0].path} are sweeps of different datapoints: their "
                "model rankings cannot be compared (run both with the same --tasks and --limit)"
            )
    blocks.append(agreement_table([r.results for r in sweeps]))
    blocks = [b for b in blocks if b]
    if not blocks:
        raise ValueError(
            "no run among the given ones was scored with --prompts or --control: nothing to report"
        )
    return "\n\n".join(blocks) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``bla-eval robustness RUN [RUN ...]``."""
    p = OneLineParser(
        prog="bla-eval robustness",
        description="Prompt sensitivity, image gain and ranking agreement of finished runs "
        "scored with --prompts or --control.",
    )
    p.add_argument("runs", nargs="+", help="folders of finished bla-eval runs")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    args = p.parse_args(argv)

    def body() -> int:
        print(report(args.runs), end="")
        return 0

    return run_guarded(body, args.debug, "bla-eval robustness")
