"""Tables for a paper: one number per cell, written as Markdown, LaTeX or CSV.

A table is a list of column names and rows of cells (strings, numbers or None). Numbers are
written with ``digits`` decimals, p-values (a column named ``p``, ``p_...`` or ``p (...)``) with
:data:`P_DIGITS` significant digits (below :data:`P_FLOOR`: ``<0.001``); None is an empty cell.
Every text (title, column name, cell) is made one line without control characters and escaped
for its format (:func:`markdown_cell`, :func:`latex_cell`), so a display name cannot break a
table or inject LaTeX. Standard library only (the main command prints these tables without
pandas).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .redact import CONTROL_RE

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
P_COLUMN_RE = re.compile(r"(?i)^p(?:$|[\s_(])")
"""Column names of p-values (``p``, ``p_value``, ``p_holm``, ``p (bootstrap)``)."""
P_DIGITS = 3
P_FLOOR = 0.001
GROUP_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Table:
    """A titled table: column names and rows of cells."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


def cell(value: Any, digits: int = 2, p_value: bool = False) -> str:
    """One cell: a number with ``digits`` decimals (whole numbers as they are; a ``p_value``
    with :data:`P_DIGITS` significant digits), else the text on one line."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if p_value:
            return f"<{P_FLOOR:g}" if 0 <= value < P_FLOOR else f"{value:.{P_DIGITS}g}"
        return f"{value:.{digits}f}"
    return plain(str(value))


def plain(text: str) -> str:
    """``text`` on one line: control characters and terminal escape sequences removed, line
    breaks and runs of whitespace made single spaces."""
    return " ".join(CONTROL_RE.sub("", text).split())


def markdown_cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, every ``|`` escaped (backslashes before
    one doubled, so that no pipe is left unescaped)."""
    return re.sub(r"(\\*)\|", lambda m: m.group(1) * 2 + "\\|", plain(text))


def latex_cell(text: str) -> str:
    """``text`` as LaTeX text: one line, every special character escaped (``\\input{...}`` is
    printed, not run)."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in plain(text))


def group_label(index: int) -> str:
    """The label of tied group ``index`` (0-based): a ... z, then aa, ab, ... (never reused)."""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, len(GROUP_LETTERS))
        label = GROUP_LETTERS[rest] + label
    return label


def group_marks(groups: Iterable[int], total: int) -> str:
    """The labels of the groups a row is in: run together (``ab``) while every label is one
    letter (``total`` groups at most 26), else separated by commas (``z,aa``)."""
    labels = [group_label(g) for g in groups]
    return ("" if total <= len(GROUP_LETTERS) else ",").join(labels)


def _p_columns(table: Table) -> list[bool]:
    return [bool(P_COLUMN_RE.match(str(c))) for c in table.columns]


def _cells(table: Table, row: Sequence[Any], digits: int) -> list[str]:
    return [cell(v, digits, p) for v, p in zip(row, _p_columns(table), strict=False)]


def markdown(table: Table, digits: int = 2) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    lines = [line([str(c) for c in table.columns]), "|" + "---|" * len(table.columns)]
    lines += [line(_cells(table, row, digits)) for row in table.rows]
    return "\n".join(lines)


def latex(table: Table, digits: int = 2) -> str:
    numeric = [
        all(isinstance(row[k], (int, float)) or row[k] is None for row in table.rows)
        for k in range(len(table.columns))
    ]
    spec = "".join("r" if n and table.rows else "l" for n in numeric)
    lines = [
        f"% {latex_cell(table.title)}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\hline",
        " & ".join(latex_cell(str(c)) for c in table.columns) + r" \\",
        "\\hline",
    ]
    lines += [
        " & ".join(latex_cell(c) for c in _cells(table, row, digits)) + r" \\" for row in table.rows
    ]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines)


def csv_text(table: Table, digits: int = 2) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([plain(str(c)) for c in table.columns])
    for row in table.rows:
        writer.writerow(_cells(table, row, digits))
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
            blocks.append(f"{plain(table.title)}\n\n{markdown(table, digits)}")
        elif fmt == "latex":
            blocks.append(latex(table, digits))
        else:
            blocks.append(f"# {plain(table.title)}\n{csv_text(table, digits)}")
    return "\n\n".join(blocks) + "\n"
