"""The Markdown report: the model's rows beside the chance, human and published reference rows."""

from __future__ import annotations

from typing import Any

TASK_LABELS = {"active_passive": "AP", "coordination": "CO", "relative_clause": "RC"}
VIEWS = {
    "ranking": (
        ("sentence_accuracy", "set_accuracy", "set_error"),
        "Ranking view (%): sentence accuracy / set accuracy / set error",
    ),
    "binary": (
        ("accuracy", "precision_true", "precision_false"),
        "Binary view (%): accuracy / precision true / precision false",
    ),
}


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * float(value):.2f}"


def _row(name: str, per_task: list[dict[str, Any] | None], keys: tuple[str, ...]) -> str:
    cells = [" / ".join(_pct((m or {}).get(k)) for k in keys) for m in per_task]
    return f"| {name} | " + " | ".join(cells) + " |"


def reference_lines(configs: list[str], view: str) -> list[str]:
    """Rows for chance and every published model of ``view`` (``bla_metric.references``)."""
    from bla_metric import references

    keys = VIEWS[view][0]
    lines = [_row("chance", [references.CHANCE] * len(configs), keys)]
    rows = references.reference_rows(protocol=view)
    for model in dict.fromkeys(r["model"] for r in rows):
        by_task = {r["task"]: r for r in rows if r["model"] == model}
        source = next(iter(by_task.values()))["source"].split(";")[0]
        lines.append(_row(f"{model} ({source})", [by_task.get(c) for c in configs], keys))
    return lines


def markdown_table(results: dict[str, Any]) -> str:
    """Markdown tables (ranking view, binary view) for a results document, reference rows below."""
    configs = list(results["tasks"])
    header = "| model | " + " | ".join(TASK_LABELS.get(c, c) for c in configs) + " |"
    rule = "|---|" + "---|" * len(configs)
    name = f"**{results['model']}** ({results['kind']})"
    blocks = []
    for view, (keys, title) in VIEWS.items():
        model_row = _row(name, [results["tasks"][c].get(view) for c in configs], keys)
        lines = [title, "", header, rule, model_row, *reference_lines(configs, view)]
        blocks.append("\n".join(lines))
    counts = ", ".join(f"{TASK_LABELS.get(c, c)} n={results['tasks'][c]['n']}" for c in configs)
    return "\n\n".join(blocks) + f"\n\nDatapoints: {counts}\n"
