"""``bla-eval reproduce ROW``: run a published row's model with the row's protocol, or check an
existing run folder, against the published numbers of ``bla_metric.published``.

Per task and metric it prints the published value, ours, the difference, the bootstrap 95%
interval of ours (resampling datapoints; for improvements over zero-shot, paired over the
datapoints both runs scored) and a verdict: within tolerance, within the 95% interval of ours
(the published value inside it, though farther from ours than the tolerance: a small run's
sampling noise), outside tolerance (neither), or cannot run here (and why). ``--list`` shows every
row and whether the engine can run it. The exit code is 0 when no checked number is outside, 1
when one is, 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bla_metric.formulas import MAX_RESAMPLES
from bla_metric.published import SETUPS, Published, Setup, find_setup, numbers_of, setups_of

from . import tables
from .cli_common import bounded_int, command_parser, field_like, option, run_guarded
from .config import RunConfig
from .protocols import get_protocol
from .runs import RunFolder, protocol_name
from .runs.check import protocol_record
from .tables import Table

PROG = "bla-eval reproduce"
WITHIN, OUTSIDE = "within tolerance", "outside tolerance"
CHECK_COLUMNS = (
    "task", "metric", "source", "published", "ours", "difference", "95% CI of ours", "tolerance",
    "verdict",
)  # fmt: skip
"""The columns of a reproduction's table."""
ROW_COLUMNS = ("row", "model", "kind", "Hub id", "protocol", "numbers", "sources", "can run here")
"""The columns of ``--list``: every published row."""
COVERED = "within the 95% CI of ours"
"""The verdict of a published value outside the tolerance but inside our interval."""


@dataclass(frozen=True)
class Check:
    """One published number beside ours."""

    number: Published
    ours: float | None
    ci: tuple[float, float] | None
    verdict: str

    @property
    def difference(self) -> float | None:
        return None if self.ours is None else self.ours - self.number.value


@dataclass(frozen=True)
class Run:
    """A finished run folder: its results.json and score records."""

    folder: Path
    results: dict[str, Any]
    records: list[dict[str, Any]]

    @classmethod
    def read(cls, folder: Path | str) -> Run:
        """The run's results.json and score records as they are (not checked)."""
        run = RunFolder(folder)
        if not run.results_path.is_file():
            raise ValueError(
                f"{run.path} is not a finished run folder: it has no {run.results_path.name}"
            )
        results = run.read_results()
        return cls(run.path, results, run.read_scores(results))

    def task_key(self, task: str) -> str | None:
        """The run's name of a published task: the config, or its learning config (ICL)."""
        from bla_metric.tasks import get_task

        for key in (task, get_task(task).learning_config):
            if key in self.results.get("tasks", {}):
                return key
        return None

    def value(self, number: Published) -> float | None:
        key = self.task_key(number.task)
        if key is None:
            return None
        return self.results["tasks"][key].get(number.view, {}).get(number.metric)

    def records_of(self, key: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("task") == key]


# ----------------------------------------------------------------------------- comparison


def _threshold(results: Mapping[str, Any]) -> float | str:
    """How the run's binary view turned scores into labels (results.json records it)."""
    return 0.5 if results.get("protocol", {}).get("binary_view") == "threshold 0.5" else "top_k"


def _stats(run: Run, records: Sequence[Mapping[str, Any]], view: str):
    """Per-datapoint statistics of one view, as the run's summary computed them."""
    from bla_metric import paper
    from bla_metric.stats import significance

    labels = [r["labels"] for r in records]
    if records and all("parsed" in r for r in records):
        return paper.datapoint_stats([r["answers"] for r in records], labels), "binary"
    threshold = _threshold(run.results) if view == "binary" else None
    scores = [r["scores"] for r in records]
    return significance.datapoint_stats(scores, labels, view, threshold), view


def _interval(
    run: Run, number: Published, baseline: Run | None, resamples: int, seed: int
) -> tuple[float, float] | None:
    """The bootstrap 95% interval of ours (paired with the baseline for improvements)."""
    from bla_metric import formulas
    from bla_metric.stats import significance

    key = run.task_key(number.task)
    records = run.records_of(key) if key else []
    if not records or not resamples:
        return None
    if baseline is None:
        stats, mode = _stats(run, records, number.view)
        ci = formulas._bootstrap(mode, stats, resamples, seed).get(number.metric)
        return None if ci is None else (ci[0], ci[1])
    base_key = baseline.task_key(number.task)
    base = {r["id"]: r for r in baseline.records_of(base_key)} if base_key else {}
    shared = [r for r in records if r["id"] in base]
    if not shared:
        return None
    a, mode = _stats(run, shared, number.view)
    b, _ = _stats(baseline, [base[r["id"]] for r in shared], number.view)
    ci = significance.paired_bootstrap_stats(a, b, mode, resamples, seed)[number.metric]["ci"]
    return ci[0], ci[1]


def _ours(run: Run, number: Published, baseline: Run | None) -> float | None:
    value = run.value(number)
    if value is None or SETUPS[number.setup].baseline is None:
        return value
    base = baseline.value(number) if baseline is not None else None
    return None if base is None else value - base


def verdict(
    number: Published, ours: float | None, missing: str, ci: tuple[float, float] | None = None
) -> str:
    """Within tolerance of ours; else inside the 95% interval of ours (``ci``); else outside
    (``missing`` when the run has no number)."""
    if ours is None:
        return missing
    if abs(ours - number.value) <= number.tolerance + 1e-9:
        return WITHIN
    if ci is not None and ci[0] - 1e-9 <= number.value <= ci[1] + 1e-9:
        return COVERED
    return OUTSIDE


def compare(
    setup: Setup,
    run: Run | None,
    baseline: Run | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> list[Check]:
    """Every published number of ``setup`` beside the run's (None: the row was not run)."""
    checks = []
    for number in numbers_of(setup.name):
        if run is None:
            checks.append(Check(number, None, None, f"cannot run here: {setup.reason}"))
            continue
        ours = _ours(run, number, baseline)
        if ours is None and setup.baseline is not None and baseline is None:
            missing = "cannot check: needs the zero-shot run on the same split (--baseline-run)"
        else:
            missing = "not in this run (task or metric not scored)"
        ci = _interval(run, number, baseline if setup.baseline else None, resamples, seed)
        checks.append(Check(number, ours, ci, verdict(number, ours, missing, ci)))
    return checks


def notes(setup: Setup, run: Run) -> list[str]:
    """What sets the run apart from the row's setup (it is compared anyway)."""
    results, out = run.results, []
    model = results.get("model")
    if setup.hub_ids and model not in setup.hub_ids:
        out.append(f"the run is of {model!r}, not of {', '.join(setup.hub_ids)} (compared anyway)")
    protocol = protocol_name(results)
    if protocol != setup.protocol:
        out.append(f"the run's protocol is {protocol!r}, the row's {setup.protocol!r}")
    dtype, ran = setup.settings.get("dtype"), protocol_record(results).get("dtype")
    if dtype and ran != dtype:
        out.append(f"the authors ran {dtype}, this run {ran or 'the default dtype'}")
    limit = protocol_record(results).get("limit")
    if limit:
        out.append(f"the run scored only the first {limit} datapoints of each task (--limit)")
    return out


def reproduced_rows(results: Mapping[str, Any]) -> list[str]:
    """The published rows a finished run reproduces: its model is one the row stands for, its
    protocol the row's, and every number of the row is within tolerance (results.json only)."""
    run = Run(Path("."), dict(results), [])
    protocol = protocol_name(results)
    found = []
    for setup in setups_of(str(results.get("model", ""))):
        if setup.baseline is not None or setup.protocol != protocol:
            continue
        numbers = numbers_of(setup.name)
        if numbers and all(verdict(n, run.value(n), "") == WITHIN for n in numbers):
            found.append(setup.name)
    return found


# ----------------------------------------------------------------------------- output


def _points(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{100 * value:+.2f}" if signed else f"{100 * value:.2f}"


def render(setup: Setup, checks: Sequence[Check], where: str, remarks: Sequence[str] = ()) -> str:
    """The comparison table (percentage points)."""
    from bla_metric.tasks import get_task

    improvement = setup.baseline is not None
    head = f"{setup.name}: {setup.model}, {', '.join(setup.hub_ids) or 'no Hub model'}, "
    head += f"protocol {setup.protocol}" + (f" (improvement over {setup.baseline})" * improvement)
    lines = [head, where, *(f"note: {r}" for r in remarks), ""]
    rows = []
    for c in checks:
        n = c.number
        ci = (
            "–"
            if c.ci is None
            else f"{_points(c.ci[0], improvement)} – {_points(c.ci[1], improvement)}"
        )
        source = n.source + (f" ({n.condition})" if n.condition else "")
        cells = [
            get_task(n.task).abbreviation,
            n.metric,
            source,
            _points(n.value, improvement),
            _points(c.ours, improvement),
            _points(c.difference, True),
            ci,
            f"±{100 * n.tolerance:.2f}",
            c.verdict,
        ]
        rows.append(cells)
    lines.append(tables.markdown(Table("", CHECK_COLUMNS, rows)))
    counts = {v: sum(c.verdict == v for c in checks) for v in (WITHIN, COVERED, OUTSIDE)}
    covered = f"{counts[COVERED]} within the 95% CI of ours only, " if counts[COVERED] else ""
    lines += [
        "",
        f"{counts[WITHIN]} within tolerance, {covered}{counts[OUTSIDE]} outside, "
        f"{len(checks) - sum(counts.values())} not checked (of {len(checks)})",
    ]
    return "\n".join(lines)


def list_rows() -> str:
    """Every published row and whether the engine can run it here."""
    rows = []
    for setup in SETUPS.values():
        numbers = numbers_of(setup.name)
        sources = ", ".join(dict.fromkeys(n.source for n in numbers))
        runs = "yes" if setup.runnable else f"no: {setup.reason}"
        cells = [setup.name, setup.model, setup.kind, ", ".join(setup.hub_ids) or "–"]
        cells += [setup.protocol, str(len(numbers)), sources, runs]
        rows.append(cells)
    return tables.markdown(Table("", ROW_COLUMNS, rows))


# ----------------------------------------------------------------------------- running


def _run_config(setup: Setup, args: argparse.Namespace, protocol: str, out: Path, tasks):
    from .scorers.local import resolve_device

    settings = dict(setup.settings)
    dtype = settings.get("dtype")
    if dtype == "float16" and resolve_device(args.device).type != "cuda":
        dtype = None  # float16 generation on a CPU: float32 instead (the tolerance says why)
    return RunConfig(
        model=args.model or setup.hub_ids[0],
        output_dir=out,
        data=args.data,
        tasks=tuple(tasks),
        limit=args.limit,
        batch_size=args.batch_size,
        device=args.device,
        dtype=dtype,
        kind=setup.kind if setup.kind != "human" else None,
        similarity=settings.get("similarity", "cosine"),
        protocol=protocol,
        icl_seed=args.seed,
        regions=args.regions,
    )


def run_setup(setup: Setup, args: argparse.Namespace) -> tuple[Run, Run | None]:
    """Run the row's model with its protocol (and, for improvements, the zero-shot baseline on
    the same learning test splits) into ``--output``."""
    from bla_metric.tasks import get_task, task_codes

    from .run import evaluate

    if not setup.runnable and not args.model:
        raise ValueError(f"row {setup.name!r} cannot run here: {setup.reason}")
    missing = missing_inputs(setup, args)
    if missing:
        raise ValueError(f"row {setup.name!r} needs {missing}: {setup.reason}")
    if not args.output:
        raise ValueError("running a row needs --output DIR (or --run DIR to check a finished run)")
    out = Path(args.output)
    tasks = tuple(setup.settings.get("tasks", ()))
    if setup.baseline is None:
        evaluate(_run_config(setup, args, setup.protocol, out, tasks))
        return Run.read(out), None
    learned = out / setup.protocol
    evaluate(_run_config(setup, args, setup.protocol, learned, tasks))
    configs = get_protocol(setup.protocol).run_tasks(
        "bla", [get_task(t).config for t in tasks or task_codes()], bool(tasks)
    )
    base = out / setup.baseline
    evaluate(_run_config(setup, args, setup.baseline, base, configs))
    return Run.read(learned), Run.read(base)


def missing_inputs(setup: Setup, args: argparse.Namespace) -> str:
    """What a row of a kind that reads region features lacks to run ('' when nothing): a
    local model and ``--regions`` (VOLTA's checkpoints are not on the Hub, the authors' region
    features not published)."""
    from .scorers import KIND_INFO

    info = KIND_INFO.get(setup.kind)
    if info is None or not info.reads_regions:
        return ""
    missing = [] if args.model else ["--model (a VOLTA folder)"]
    missing += [] if args.regions else ["--regions"]
    return " and ".join(missing)


# ----------------------------------------------------------------------------- command line


@dataclass(frozen=True, kw_only=True)
class ReproduceOptions:
    """The options of ``bla-eval reproduce``; those of the run it starts are ``RunConfig``'s."""

    row: str | None = option(
        help="published row, by the paper's model name (clip, blip2, blip2-icl-sd, gpt-2, ...; "
        "case-insensitive)",
        flag="row",
        nargs="?",
    )
    list: bool = option(False, "show every row and whether it can run")
    run: str | None = option(help="check this finished run folder instead of running")
    baseline_run: str | None = option(help="improvement rows: the zero-shot run on the same split")
    model: str | None = field_like(
        RunConfig, "model", default=None, help="run this model instead of the row's Hub id"
    )
    output: str | None = option(help="folder for the run (improvement rows: one subfolder each)")
    data: str | None = field_like(
        RunConfig, "data", help="Hub dataset id or local dataset folder (default: the bla one)"
    )
    regions: str | None = field_like(
        RunConfig,
        "regions",
        help="ViLBERT and LXMERT rows: the region features, as bla-eval --regions (a .tsv in "
        "the authors' layout, a region store, or the detector)",
    )
    limit: int | None = field_like(RunConfig, "limit")
    batch_size: int | None = field_like(RunConfig, "batch_size")
    device: str = field_like(RunConfig, "device")
    resamples: int = option(
        1000,
        f"bootstrap resamples (0: no CI; at most {MAX_RESAMPLES})",
        type=bounded_int(0, MAX_RESAMPLES),
    )
    seed: int = option(
        0,
        "seed of the bootstrap and the ICL coins (0 to 2**32 - 1)",
        type=bounded_int(0, 2**32 - 1),
    )


def build_parser() -> argparse.ArgumentParser:
    return command_parser(
        PROG,
        "Check a run against a published row (paper and thesis tables), or run the "
        "row's model with its protocol and check that.",
        ReproduceOptions,
    )


def _check(args: argparse.Namespace) -> int:
    if args.list:
        print(list_rows())
        return 0
    if not args.row:
        raise ValueError("name a published row (bla-eval reproduce --list shows them)")
    setup = find_setup(args.row)
    if args.run:
        run = Run.read(args.run)
        baseline = Run.read(args.baseline_run) if args.baseline_run else None
        where = f"run: {run.folder}"
    elif not setup.runnable and not args.model:
        checks = compare(setup, None)
        print(render(setup, checks, "not run"))
        return 0
    else:
        run, baseline = run_setup(setup, args)
        where = f"run: {run.folder}" + (f", baseline: {baseline.folder}" if baseline else "")
    checks = compare(setup, run, baseline, args.resamples, args.seed)
    print(render(setup, checks, where, notes(setup, run)))
    return 1 if any(c.verdict == OUTSIDE for c in checks) else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval reproduce``."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return run_guarded(lambda: _check(args), args.debug, PROG)
