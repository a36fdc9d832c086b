"""Tables for a paper: one number per cell, written as Markdown, LaTeX or CSV.

A table is a list of column names and rows of cells (strings, numbers or None). Numbers are
written with ``digits`` decimals, p-values (a column named ``p``, ``p_...`` or ``p (...)``) with
:data:`P_DIGITS` significant digits (below :data:`P_FLOOR`: ``<0.001``); None is an empty cell.
Every text (title, column name, cell) goes through one function, :func:`escape`: made one line
without control characters and escaped for its format (:func:`markdown_cell`, :func:`latex_cell`;
CSV's quoting is the ``csv`` module's), so a display name cannot break a table, add a row or
inject LaTeX. The Markdown and CSV tables of ``bla-eval analyze`` (pandas frames) are written by
the same functions (:func:`markdown_row`, :func:`frame_csv`). Standard library only (the main
command prints these tables without pandas).
"""

from __future__ import annotations

import csv
import io
import math
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .cli_common import HIDDEN_CATEGORIES
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


def _hidden(char: str) -> bool:
    return unicodedata.category(char) in HIDDEN_CATEGORIES


def plain(text: str) -> str:
    """``text`` on one line: control characters and terminal escape sequences removed, and so
    is every character a display name may not hold (``cli_common.HIDDEN_CATEGORIES``: a bidi
    override such as U+202E would reorder the row); line breaks and runs of whitespace made
    single spaces."""
    words = CONTROL_RE.sub("", text).split()  # line breaks and separators are whitespace
    kept = ("".join(c for c in w if not _hidden(c)) for w in words)
    return " ".join(w for w in kept if w)


def markdown_cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, every ``|`` escaped (backslashes before
    one doubled, so that no pipe is left unescaped)."""
    return re.sub(r"(\\*)\|", lambda m: m.group(1) * 2 + "\\|", plain(text))


def latex_cell(text: str) -> str:
    """``text`` as LaTeX text: one line, every special character escaped (``\\input{...}`` is
    printed, not run)."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in plain(text))


def escape(text: Any, fmt: str) -> str:
    """The one escaping of a table's text (title, column name, cell) for ``fmt``: one line
    without control characters, then Markdown's pipes or LaTeX's specials escaped (CSV: the
    ``csv`` writer quotes commas and quotes)."""
    if fmt == "markdown":
        return markdown_cell(str(text))
    if fmt == "latex":
        return latex_cell(str(text))
    if fmt == "csv":
        return plain(str(text))
    raise ValueError(f"unknown table format {fmt!r}: expected one of {', '.join(TABLE_FORMATS)}")


def markdown_row(cells: Iterable[Any]) -> str:
    """One Markdown table row, each cell through :func:`escape` (so it has as many cells as
    given, whatever they hold)."""
    return "| " + " | ".join(escape(c, "markdown") for c in cells) + " |"


def csv_lines(rows: Iterable[Sequence[Any]]) -> str:
    """CSV rows (the first the header), each cell through :func:`escape`; no final newline."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow([escape(c, "csv") for c in row])
    return buffer.getvalue().rstrip("\n")


def _frame_value(value: Any) -> Any:
    """A frame's value in CSV as pandas writes it: NaN and None empty, numbers in full."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def frame_csv(frame: Any, index: bool = True) -> str:
    """A pandas frame as CSV (its index first, as ``to_csv`` writes it), every label and text
    through :func:`escape`; ends with a newline."""
    names = [n or "" for n in frame.index.names] if index else []
    columns = [" ".join(map(str, c)) if isinstance(c, tuple) else c for c in frame.columns]
    rows: list[Sequence[Any]] = [[*names, *columns]]
    for key, row in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        keys = (list(key) if isinstance(key, tuple) else [key]) if index else []
        rows.append([_frame_value(v) for v in [*keys, *row]])
    return csv_lines(rows) + "\n"


def group_label(index: int) -> str:
    """The label of not-separated group ``index`` (0-based): a ... z, then aa, ab, ... (never
    reused)."""
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


def markdown(table: Table, digits: int = 2, right: Collection[int] = ()) -> str:
    """The table in Markdown (its title is not written); the columns numbered in ``right`` are
    right-aligned (``---:``)."""
    rule = "".join("---:|" if k in right else "---|" for k in range(len(table.columns)))
    lines = [markdown_row(table.columns), "|" + rule]
    lines += [markdown_row(_cells(table, row, digits)) for row in table.rows]
    return "\n".join(lines)


def latex(table: Table, digits: int = 2) -> str:
    numeric = [
        all(isinstance(row[k], (int, float)) or row[k] is None for row in table.rows)
        for k in range(len(table.columns))
    ]
    spec = "".join("r" if n and table.rows else "l" for n in numeric)
    lines = [
        f"% {escape(table.title, 'latex')}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\hline",
        " & ".join(escape(c, "latex") for c in table.columns) + r" \\",
        "\\hline",
    ]
    lines += [
        " & ".join(escape(c, "latex") for c in _cells(table, row, digits)) + r" \\"
        for row in table.rows
    ]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines)


def csv_text(table: Table, digits: int = 2) -> str:
    return csv_lines([table.columns, *(_cells(table, row, digits) for row in table.rows)])


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
