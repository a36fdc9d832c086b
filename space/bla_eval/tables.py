"""Tables for a paper: one number per cell, written as Markdown, LaTeX or CSV.

A table is a list of column names and rows of cells (strings, numbers or None). Numbers are
written with ``digits`` decimals; None is an empty cell. Standard library only (the main command
prints these tables without pandas).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TABLE_FORMATS = ("markdown", "latex", "csv")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class Table:
    """A titled table: column names and rows of cells."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


def cell(value: Any, digits: int = 2) -> str:
    """One cell: a number with ``digits`` decimals (whole numbers as they are), else the text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _latex_text(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def markdown(table: Table, digits: int = 2) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    lines = [line(list(table.columns)), "|" + "---|" * len(table.columns)]
    lines += [line([cell(v, digits) for v in row]) for row in table.rows]
    return "\n".join(lines)


def latex(table: Table, digits: int = 2) -> str:
    numeric = [
        all(isinstance(row[k], (int, float)) or row[k] is None for row in table.rows)
        for k in range(len(table.columns))
    ]
    spec = "".join("r" if n and table.rows else "l" for n in numeric)
    lines = [
        f"% {_latex_text(table.title)}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\hline",
        " & ".join(_latex_text(c) for c in table.columns) + r" \\",
        "\\hline",
    ]
    lines += [" & ".join(_latex_text(cell(v, digits)) for v in row) + r" \\" for row in table.rows]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines)


def csv_text(table: Table, digits: int = 2) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(table.columns))
    for row in table.rows:
        writer.writerow([cell(v, digits) for v in row])
    return buffer.getvalue().rstrip("\n")


def render(tables: Sequence[Table], fmt: str, digits: int = 2) -> str:
    """The tables in ``fmt`` (markdown: a title line above each; latex: a comment line; csv: a
    ``# title`` line), separated by blank lines."""
    if fmt not in TABLE_FORMATS:
        raise ValueError(
            f"unknown table format {fmt!r}: expected one of {', '.join(TABLE_FORMATS)}"
        )
    blocks = []
    for table in tables:
        if fmt == "markdown":
            blocks.append(f"{table.title}\n\n{markdown(table, digits)}")
        elif fmt == "latex":
            blocks.append(latex(table, digits))
        else:
            blocks.append(f"# {table.title}\n{csv_text(table, digits)}")
    return "\n\n".join(blocks) + "\n"
