"""A run beside the chance and published reference rows: the rows, and the Markdown report.

The Space's tables read the same :func:`reference_rows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .benchmarks import Benchmark, get_benchmark
from .protocols import DEFAULT_PROTOCOL

CHANCE = "Chance"


@dataclass(frozen=True)
class ReferenceRow:
    """One published model (or chance, or people) from one source: per task, per view, metrics."""

    model: str
    source: str
    kind: str = ""
    protocol: str = DEFAULT_PROTOCOL
    tasks: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def has_view(self, view: str) -> bool:
        """Whether the source reports any number in ``view``."""
        return any(view in metrics for metrics in self.tasks.values())


def reference_rows(bench: Benchmark) -> list[ReferenceRow]:
    """Chance first (where the benchmark has one), then every (model, source) of the benchmark's
    published rows, in their order."""
    from bla_metric.references import MODEL_KINDS

    grouped: dict[tuple[str, str], ReferenceRow] = {}
    for view in bench.views:
        for row in bench.reference_rows(view):
            source = row["source"].split(";")[0]
            kind = row.get("kind") or MODEL_KINDS.get(row["model"], "")
            ref = grouped.setdefault(
                (row["model"], source),
                ReferenceRow(
                    row["model"], source, kind, "" if kind == "human" else DEFAULT_PROTOCOL
                ),
            )
            skip = ("model", "source", "protocol", "task", "kind")
            ref.tasks.setdefault(row["task"], {})[view] = {
                k: v for k, v in row.items() if k not in skip
            }
    if bench.chance is None:
        return list(grouped.values())
    tasks = {t: {view: dict(bench.chance) for view in bench.views} for t in bench.task_names()}
    return [
        ReferenceRow(CHANCE, "random order / coin flip", protocol="", tasks=tasks),
        *grouped.values(),
    ]


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.2f}"


def _row(name: str, per_task: Sequence[Mapping[str, Any] | None], keys: Sequence[str]) -> str:
    cells = [" / ".join(_pct((m or {}).get(k)) for k in keys) for m in per_task]
    return f"| {name} | " + " | ".join(cells) + " |"


def reference_lines(bench: Benchmark, tasks: Sequence[str], view: str) -> list[str]:
    """Rows for chance and every published model of ``view`` (the benchmark's reference rows)."""
    keys = bench.views[view][0]
    lines = []
    for ref in reference_rows(bench):
        if ref.has_view(view):
            name = ref.model if ref.model == CHANCE else f"{ref.model} ({ref.source})"
            lines.append(_row(name, [ref.tasks.get(t, {}).get(view) for t in tasks], keys))
    return lines


def markdown_table(results: dict[str, Any]) -> str:
    """Markdown tables (one per view) for a results document, reference rows below."""
    bench = get_benchmark(results.get("benchmark", "bla"))
    tasks = list(results["tasks"])
    header = "| model | " + " | ".join(bench.task_label(t) for t in tasks) + " |"
    rule = "|---|" + "---|" * len(tasks)
    name = f"**{results['model']}** ({results['kind']})"
    blocks = []
    for view, (keys, title) in bench.views.items():
        model_row = _row(name, [results["tasks"][t].get(view) for t in tasks], keys)
        lines = [title, "", header, rule, model_row, *reference_lines(bench, tasks, view)]
        blocks.append("\n".join(lines))
    counts = ", ".join(f"{bench.task_label(t)} n={results['tasks'][t]['n']}" for t in tasks)
    unparsed = [t for t in tasks if "unparsed" in results["tasks"][t]]
    if unparsed:
        shown = ", ".join(
            f"{bench.task_label(t)} {results['tasks'][t]['unparsed']}" for t in unparsed
        )
        counts += f"\n\nUnparsed answers (counted nowhere, as the authors did): {shown}"
    return "\n\n".join(blocks) + f"\n\nDatapoints: {counts}\n"
