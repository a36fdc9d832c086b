"""``bla-eval learning-report RUN_DIR...``: the paper's Table 3, Table 4 and Figure 3 from runs.

Runs are ``bla-eval`` output folders (``results.json`` + ``scores.jsonl``; protocols zero-shot,
icl-sd, icl-dd on the learning test splits) and ``bla-finetune`` output folders
(``finetune.json``, which holds its own zero-shot scores of the same test splits).

- Table 3 (SD): improvement over zero-shot of accuracy, precision_true and precision_false on the
  same task's learning test split (ICL: the icl-sd run vs the model's zero-shot run, on the
  datapoints both scored; fine-tuning: after vs before training, mean over seeds).
- Table 4 (DD): accuracy improvement on another task's test split (icl-dd: demonstrations from the
  other construction; fine-tuning: trained on one task, tested on the other; also on the test
  images not seen in training).
- Figure 3: accuracy zero-shot vs learned per task and model (PNG).

Improvements are percentage points (:func:`bla_metric.learning.improvement`), next to the paper's
published values (:mod:`bla_metric.learning_references`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path
from typing import Any

from bla_metric import learning_references as refs
from bla_metric.learning import LEARNING_METRICS, improvement, improvements
from bla_metric.tasks import LEARNING_SUFFIX, TASKS, get_task

from .. import tables
from ..benchmarks.bla import summarise
from ..cli_common import command_parser, option, run_guarded
from ..outputs import FINETUNE_FILE, read_json, staged
from ..protocols import PROTOCOLS, Protocol
from ..runs import RESULTS_FILE, RunFolder, protocol_name
from ..runs.check import protocol_record
from ..tables import Table

FIGURE_FILE = "figure3_accuracy.png"
REPORT_COMMAND = "bla-eval learning-report"
"""The command named in the marker of a report folder (it replaces only its own)."""


@dataclass
class Row:
    """One learned-vs-zero-shot comparison on one test split."""

    model: str
    learning: str  # "ICL" or "fine-tuning"
    setting: str  # "SD" or "DD"
    learned_on: str  # task code
    tested_on: str  # task code
    n: int
    zero_shot: dict[str, float]
    learned: dict[str, float]
    improvement: dict[str, float] = field(default_factory=dict)
    subset: str = "all"  # fine-tuning DD: "unseen" = test images not seen in training
    source: str = ""


def _binary(records: Sequence[dict], probabilistic: bool) -> dict[str, float]:
    """The binary view of BLA records (the engine's own summary)."""
    return summarise(records, probabilistic)["binary"]


@dataclass
class EvalRun:
    folder: Path
    results: dict
    records: list[dict]

    @property
    def protocol(self) -> str:
        return protocol_name(self.results)

    @property
    def spec(self) -> Protocol | None:
        """The run's protocol spec (None for a protocol this engine does not know)."""
        return PROTOCOLS.get(self.protocol)

    @property
    def zero_shot(self) -> bool:
        """True for a run without demonstrations that scores P(yes) (what learning improves)."""
        return self.spec is not None and not (self.spec.in_context or self.spec.generates_answers)

    @property
    def probabilistic(self) -> bool:
        return protocol_record(self.results).get("binary_view") == "threshold 0.5"

    def by_task(self, config: str) -> dict[str, dict]:
        return {r["id"]: r for r in self.records if r["task"] == config}


FINETUNE_KEYS = {"model": str, "task": str, "runs": list, "summary": dict}
"""What the report reads of a ``finetune.json`` (key -> JSON type)."""


def learning_run(folder: Path) -> EvalRun:
    """A bla-eval run on BLA's learning test splits, checked by :meth:`RunFolder.open`; any other
    run (another benchmark, BLA's main test sets) is refused naming it."""
    results = read_json(folder / RESULTS_FILE)
    benchmark = str(results.get("benchmark") or "bla")
    tasks = list(results.get("tasks") or {}) if isinstance(results.get("tasks"), dict) else []
    if benchmark != "bla" or not tasks or not all(t.endswith(LEARNING_SUFFIX) for t in tasks):
        raise ValueError(
            f"{folder} is not a learning run (benchmark {benchmark!r}, tasks "
            f"{', '.join(map(str, tasks)) or 'none'}): the learning report reads bla-eval runs "
            f"on BLA's learning test splits (--tasks <task>{LEARNING_SUFFIX}, or --protocol "
            "icl-sd / icl-dd) and bla-finetune outputs"
        )
    finished = RunFolder.open(folder)
    records = [r for task in tasks for r in finished.records[task]]
    return EvalRun(finished.path, finished.results, records)


def finetune_run(folder: Path) -> dict:
    """The ``finetune.json`` of a bla-finetune output, with the keys the report reads (an
    error names the file and the key)."""
    path = folder / FINETUNE_FILE
    document = read_json(path)
    for key, kind in FINETUNE_KEYS.items():
        if not isinstance(document.get(key), kind):
            raise ValueError(
                f"{path} has no {kind.__name__} {key!r}: not a finetune.json of bla-finetune"
            )
    try:
        get_task(document["task"])
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    if not document["runs"] or not isinstance(document["runs"][0], dict):
        raise ValueError(f"{path} has no runs: not a finetune.json of bla-finetune")
    return document


def load_runs(folders: Sequence[str]) -> tuple[list[EvalRun], list[tuple[Path, dict]]]:
    """bla-eval runs and bla-finetune runs of ``folders`` (an error names a folder with neither)."""
    evals, tunes = [], []
    for name in folders:
        folder = Path(name)
        if (folder / FINETUNE_FILE).is_file():
            tunes.append((folder, finetune_run(folder)))
        elif (folder / RESULTS_FILE).is_file():
            evals.append(learning_run(folder))
        else:
            raise FileNotFoundError(
                f"{folder} is neither a bla-eval run ({RESULTS_FILE}) nor a bla-finetune run "
                f"({FINETUNE_FILE})"
            )
    return evals, tunes


def icl_rows(evals: Sequence[EvalRun]) -> tuple[list[Row], list[str]]:
    """ICL runs against the same model's zero-shot run, on the datapoints both scored."""
    rows, notes = [], []
    zero = {}
    for run in evals:
        if run.zero_shot:
            for config in run.results.get("tasks", {}):
                zero.setdefault((run.results["model"], config), run)
    for run in evals:
        if run.spec is None or not run.spec.in_context:
            continue
        model = run.results["model"]
        partners = protocol_record(run.results).get("partner_configs", {})
        for config in run.results.get("tasks", {}):
            base = zero.get((model, config))
            if base is None:
                notes.append(
                    f"no zero-shot run of {model} on {config}: {run.protocol} not compared"
                )
                continue
            learned, before = run.by_task(config), base.by_task(config)
            ids = [i for i in learned if i in before]
            tested = get_task(config).code
            dd = run.spec.cross_task
            learned_on = get_task(partners.get(config, config)).code if dd else tested
            after_m = _binary([learned[i] for i in ids], run.probabilistic)
            before_m = _binary([before[i] for i in ids], base.probabilistic)
            rows.append(
                Row(
                    model,
                    "ICL",
                    "DD" if dd else "SD",
                    learned_on,
                    tested,
                    len(ids),
                    _pick(before_m),
                    _pick(after_m),
                    improvements(after_m, before_m),
                )
            )
    return rows, notes


def finetune_rows(tunes: Sequence[tuple[Path, dict]]) -> list[Row]:
    """Fine-tuned vs before training (mean over seeds), SD and DD (all and unseen images)."""
    rows = []
    for folder, doc in tunes:
        try:
            rows += _finetune_rows(doc)
        except (KeyError, TypeError, IndexError, AttributeError) as err:
            raise ValueError(
                f"{folder / FINETUNE_FILE} is not a finetune.json of bla-finetune: "
                f"{type(err).__name__} {err}"
            ) from None
    return rows


def _finetune_rows(doc: dict) -> list[Row]:
    rows = []
    learned_on = get_task(doc["task"]).code
    first = doc["runs"][0]["finetuned"]
    for config, entry in doc["summary"].items():
        tested = get_task(config).code
        for subset in ("all", "unseen"):
            if subset not in entry.get("finetuned", {}):
                continue
            after = {m: v["mean"] for m, v in entry["finetuned"][subset].items()}
            before = {m: v["mean"] for m, v in entry["zero_shot"][subset].items()}
            rows.append(
                Row(
                    doc["model"],
                    "fine-tuning",
                    first[config]["setting"],
                    learned_on,
                    tested,
                    first[config][subset]["n"],
                    before,
                    after,
                    improvements(after, before),
                    subset,
                )
            )
    return rows


def _pick(metrics: dict[str, float]) -> dict[str, float]:
    return {m: metrics[m] for m in LEARNING_METRICS}


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


def table3(rows: Sequence[Row]) -> str:
    """Markdown: SD improvements per metric and task, ours then the paper's."""
    codes = list(TASKS)
    columns = ["model", "learning", "metric", *(c.upper() for c in codes)]
    lines: list[list[str]] = []
    ours: dict[tuple[str, str], dict[str, Row]] = {}
    for row in rows:
        if row.setting == "SD":
            ours.setdefault((row.model, row.learning), {})[row.tested_on] = row
    for (model, learning), by_task in ours.items():
        for metric in LEARNING_METRICS:
            cells = [
                _fmt(by_task[c].improvement.get(metric)) if c in by_task else "–" for c in codes
            ]
            lines.append([model, learning, metric, *cells])
    for metric in refs.TABLE3:  # the paper prints the precisions (accuracy: Figure 3)
        for model, mode in refs.LEARNING_MODE.items():
            cells = [_fmt(refs.table3_value(metric, model, c)) for c in codes]
            learning = "ICL" if mode == "icl" else mode
            label = f"{model} ({refs.SOURCE_TABLE3})"
            lines.append([label, learning, metric, *cells])
    return tables.markdown(Table("", columns, lines), right=range(3, len(columns)))


def table4(rows: Sequence[Row]) -> str:
    """Markdown: DD accuracy improvements, learned on a task (row) and tested on another."""
    codes = list(TASKS)
    columns = ["model", "learning", "learned on", "test images", *(c.upper() for c in codes)]
    lines: list[list[str]] = []
    ours: dict[tuple[str, str, str, str], dict[str, Row]] = {}
    for row in rows:
        if row.setting == "DD":
            key = (row.model, row.learning, row.learned_on, row.subset)
            ours.setdefault(key, {})[row.tested_on] = row
    for (model, learning, learned_on, subset), by_task in ours.items():
        cells = [
            _fmt(by_task[c].improvement.get("accuracy")) if c in by_task else "–" for c in codes
        ]
        images = "all" if subset == "all" else "not seen in training"
        lines.append([model, learning, learned_on.upper(), images, *cells])
    for model, by_learned in refs.TABLE4.items():
        learning = "ICL" if refs.LEARNING_MODE[model] == "icl" else "fine-tuning"
        for learned_on in by_learned:
            cells = [_fmt(refs.table4_value(model, learned_on, c)) for c in codes]
            label = f"{model} ({refs.SOURCE_TABLE4})"
            lines.append([label, learning, learned_on.upper(), "all", *cells])
    return tables.markdown(Table("", columns, lines), right=range(4, len(columns)))


def figure3(rows: Sequence[Row], path: Path) -> Path:
    """Accuracy zero-shot vs learned (SD) per task and model, with the paper's stated values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codes = list(TASKS)
    sd = [r for r in rows if r.setting == "SD"]
    series = list(dict.fromkeys((r.model, r.learning) for r in sd))
    fig, ax = plt.subplots(figsize=(max(6, 2.5 * len(codes)), 4))
    width = 0.8 / max(1, 2 * len(series))
    for k, (model, learning) in enumerate(series):
        by_task = {r.tested_on: r for r in sd if (r.model, r.learning) == (model, learning)}
        for j, stage in enumerate(("zero_shot", "learned")):
            xs, ys = [], []
            for i, code in enumerate(codes):
                if code in by_task:
                    xs.append(i + (2 * k + j) * width - 0.4 + width / 2)
                    ys.append(100 * getattr(by_task[code], stage)["accuracy"])
            name = Path(model).name or model
            label = f"{name} ({learning}) {'zero-shot' if stage == 'zero_shot' else 'learned'}"
            ax.bar(xs, ys, width, label=label, alpha=0.5 if stage == "zero_shot" else 1.0)
    for model, by_task in refs.FIGURE3_ACCURACY.items():
        for code, (relation, value) in by_task.items():
            i = codes.index(code)
            ax.hlines(value, i - 0.4, i + 0.4, colors="black", linestyles="dashed")
            ax.text(i, value + 0.5, f"paper: {model} {relation} {value:g}", ha="center", fontsize=7)
    ax.axhline(50, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(codes)), [get_task(c).abbreviation for c in codes])
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("BLA-specific learning: zero-shot vs learned (paper Figure 3)")
    if series:
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def build_report(folders: Sequence[str], output: Path | None) -> tuple[str, dict[str, Any]]:
    """The markdown report and its JSON document; with ``output`` they and the figure are
    written into that folder (a new one, or one an earlier learning report wrote)."""
    evals, tunes = load_runs(folders)
    rows, notes = icl_rows(evals)
    rows += finetune_rows(tunes)
    text = [
        "## Table 3: same task (SD), improvement over zero-shot (percentage points)",
        "",
        table3(rows),
        "",
        "## Table 4: cross task (DD), accuracy improvement over zero-shot (percentage points)",
        "",
        table4(rows),
        "",
        f"Paper, Figure 3 (text): BLIP2 learned AP accuracy > 70%, ViLBERT 61%; BLIP2 leads the "
        f"best discriminative model by {refs.FIGURE3_BLIP2_LEAD['ap']} / "
        f"{refs.FIGURE3_BLIP2_LEAD['co']} / {refs.FIGURE3_BLIP2_LEAD['rc']} points (AP / CO / RC).",
    ]
    text += [f"- note: {n}" for n in notes]
    document: dict[str, Any] = {"rows": [asdict(r) for r in rows], "notes": notes}
    if output is None:
        return "\n".join(text), document
    document["figure"] = str(Path(output) / FIGURE_FILE)
    text.append(f"\nFigure 3: {document['figure']}")
    with staged(output, REPORT_COMMAND) as stage:
        figure3(rows, stage / FIGURE_FILE)
        (stage / "learning_report.md").write_text("\n".join(text) + "\n", encoding="utf-8")
        (stage / "learning_report.json").write_text(json.dumps(document, indent=2), "utf-8")
    return "\n".join(text), document


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """The options of ``bla-eval learning-report``."""

    runs: tuple[str, ...] = option(MISSING, "bla-eval or bla-finetune output folders", flag="runs")
    output: str | None = option(
        help="folder for learning_report.md, learning_report.json and the figure PNG"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bla-eval learning-report``."""
    p = command_parser(
        "bla-eval learning-report",
        "Paper Table 3, Table 4 and Figure 3 from bla-eval runs (zero-shot, icl-sd, "
        "icl-dd on the learning test splits) and bla-finetune runs.",
        ReportOptions,
    )
    args = p.parse_args(argv)

    def run() -> int:
        out = Path(args.output) if args.output else None
        text, _ = build_report(args.runs, out)
        print(text)
        return 0

    return run_guarded(run, args.debug, "bla-eval learning-report")


__all__ = ["build_report", "improvement", "main"]
