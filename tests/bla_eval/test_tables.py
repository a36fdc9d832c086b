"""The one table renderer: every title, column and cell one line without control characters and
escaped for its format (a display name cannot break a Markdown table or run LaTeX), p-values with
enough digits, tied-group labels that never repeat."""

from __future__ import annotations

import csv
import io

import pytest
from bla_eval.report import display_name
from bla_eval.tables import Table, group_label, group_marks, render

HOSTILE = "evil | name\n| x | y |\n\n\\input{/etc/passwd} & 100% $x$ #1 a_b ~^{}\x1b[2J\x07"


def table() -> Table:
    return Table(
        f"Title {HOSTILE}",
        ["model", "p (bootstrap)", "p_holm", "A"],
        [
            [HOSTILE, 0.005, 0.013, 0.5],
            ["plain", 0.0004, 1.0, None],
        ],
    )


def test_markdown_keeps_one_row_per_line_and_every_pipe_escaped():
    text = render([table()], "markdown")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) == 4  # header, rule, two rows
    for row in rows:
        unescaped = row.replace("\\\\", "").replace("\\|", "")
        assert unescaped.count("|") == 5, row
    assert "\x1b" not in text and "\x07" not in text


def test_latex_escapes_every_special_character_and_line_break():
    text = render([table()], "latex")
    lines = text.splitlines()
    assert lines[0].startswith("% Title") and len(lines) == 9  # two rows, no injected line
    body = lines[5]
    assert "\\textbackslash{}input\\{/etc/passwd\\}" in body and "\\input" not in body
    assert body.count(" & ") == 3 and body.endswith(r" \\")
    for escaped in (r"\&", r"\%", r"\$x\$", r"\#1", r"a\_b", r"\textasciitilde{}"):
        assert escaped in body
    assert "\x1b" not in text and "\n\n" not in text.strip()


def test_p_values_print_with_three_significant_digits():
    for fmt in ("markdown", "latex", "csv"):
        text = render([table()], fmt)
        assert "0.005" in text and "0.013" in text and "<0.001" in text, fmt
        assert "0.50" in text  # other numbers keep their decimals
    rows = list(csv.reader(io.StringIO(render([table()], "csv").split("\n", 1)[1])))
    assert rows[1][0] == " ".join(HOSTILE.replace("\x1b[2J", "").replace("\x07", "").split())


@pytest.mark.parametrize(
    ("index", "label"), [(0, "a"), (25, "z"), (26, "aa"), (27, "ab"), (51, "az"), (52, "ba")]
)
def test_group_labels_never_wrap(index: int, label: str):
    assert group_label(index) == label


def test_group_marks_stay_readable_past_26_groups():
    assert len({group_label(g) for g in range(1000)}) == 1000
    assert group_marks([0, 1], 26) == "ab"
    assert group_marks([25, 26], 27) == "z,aa"


def test_a_display_name_is_one_line_without_control_characters():
    assert display_name({"display_name": "a\nb\x1b[31m|c", "model": "m"}) == "a b|c"
