"""The one table renderer: every title, column and cell one line without control characters and
escaped for its format (a display name cannot break a Markdown table or run LaTeX), p-values with
enough digits, tied-group labels that never repeat."""

from __future__ import annotations

import csv
import io

import pytest
from bla_eval.report import display_name
from bla_eval.tables import Table, group_label, group_marks, markdown, render

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


# ----------------------------------------------------------------------------- every command
NAMES = ["evil\nname | x", 'L\\input{x} & 100% $ #_, "q"']
"""Run names with a line break and a pipe, LaTeX's specials, a comma and quotes."""


def _markdown_rows_agree(text: str) -> int:
    """Every Markdown table of ``text`` has as many cells in each row as in its header; the
    number of table rows."""
    count, width = 0, None
    for line in text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = line.replace("\\\\", "").replace("\\|", "").count("|")
        width = width or cells
        assert cells == width, line
        count += 1
    return count


def _csv_rows_agree(text: str) -> None:
    """Every row of a CSV text has the header's number of cells, one row per line."""
    lines = text.strip("\n").split("\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == len(lines) and {len(r) for r in rows} == {len(rows[0])}, text


def test_frames_and_rows_of_pandas_go_through_the_one_escape():
    import pandas as pd
    from bla_eval.tables import escape, frame_csv, markdown_row

    frame = pd.DataFrame({NAMES[0]: [0.5, float("nan")], NAMES[1]: ["a,b", 'say "x"']})
    frame.index = pd.Index([NAMES[1], "plain"], name="model\nname")
    text = frame_csv(frame)
    _csv_rows_agree(text)
    assert pd.read_csv(io.StringIO(text), index_col=0).iloc[0, 1] == "a,b"
    assert _markdown_rows_agree(markdown_row([NAMES[0], 1, NAMES[1]])) == 1
    assert escape(NAMES[1], "latex").count("&") == 1  # the one \&
    with pytest.raises(ValueError, match="unknown table format 'html'"):
        escape("x", "html")


def test_compare_and_analyze_keep_every_row_whole_in_every_format(
    co_run, built_dataset, tmp_path, capsys
):
    """The probe's run names through ``compare`` (printed in each format, and its written
    files) and ``analyze`` (its report and CSVs): every row has the right number of cells."""
    import json
    import shutil

    from bla_eval.cli import main as bla_eval

    runs = []
    for k, name in enumerate(NAMES):
        run = tmp_path / f"run{k}"
        shutil.copytree(co_run, run)
        results = json.loads((run / "results.json").read_text(encoding="utf-8"))
        results.update(display_name=name, model=f"models/{NAMES[0]} {name}")  # analyze: the model
        (run / "results.json").write_text(json.dumps(results), encoding="utf-8")
        runs.append(str(run))
    for fmt in ("markdown", "latex", "csv"):
        capsys.readouterr()
        assert bla_eval(["compare", *runs, "--resamples", "20", "--table-format", fmt]) == 0
        printed = capsys.readouterr().out
        if fmt == "markdown":
            assert _markdown_rows_agree(printed) == 2 + 6 + 2 + 2
        elif fmt == "latex":
            rows = [line for line in printed.splitlines() if line.endswith(r" \\")]
            assert len(rows) == 2 * 1 + 6 + 2 and {r.count(" & ") for r in rows} == {8, 9}
            assert "\\input" not in printed
        else:
            for block in printed.strip().split("\n\n"):
                _csv_rows_agree(block.split("\n", 1)[1])
    assert bla_eval(["compare", *runs, "--resamples", "20", "--output", str(tmp_path / "cmp")]) == 0
    _markdown_rows_agree((tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8"))
    _csv_rows_agree((tmp_path / "cmp" / "leaderboard.csv").read_text(encoding="utf-8"))
    argv = ["analyze", runs[1], "--data", built_dataset, "--output", tmp_path / "analysis"]
    assert bla_eval([str(a) for a in argv]) == 0
    analysis = tmp_path / "analysis"
    report = (analysis / "report.md").read_text(encoding="utf-8")
    assert _markdown_rows_agree(report) > 10
    assert report.startswith(f"# BLA analysis: evil name | x {NAMES[1]}\n")
    for path in analysis.glob("*.csv"):
        _csv_rows_agree(path.read_text(encoding="utf-8"))


def test_compare_shows_no_format_character_of_a_display_name(co_run, tmp_path, capsys):
    """A run recorded with a bidi override or an invisible isolate in its display name (an
    earlier version, a file edited by hand): no table of ``compare`` (paired, rank) carries it."""
    import json
    import shutil
    import unicodedata

    from bla_eval.cli import main as bla_eval

    runs = []
    for k, name in enumerate(["clip\u202eevil", "other\u2066name\u200b"]):
        run = tmp_path / f"run{k}"
        shutil.copytree(co_run, run)
        results = json.loads((run / "results.json").read_text(encoding="utf-8"))
        results.update(display_name=name)
        (run / "results.json").write_text(json.dumps(results), encoding="utf-8")
        runs.append(str(run))
    for fmt in ([], ["--table-format", "markdown"], ["--table-format", "csv"]):
        assert bla_eval(["compare", *runs, "--resamples", "20", *fmt]) == 0
        printed = capsys.readouterr().out
        assert "clipevil" in printed, fmt
        assert not [c for c in printed if unicodedata.category(c) == "Cf"], fmt


def test_markdown_right_aligns_the_columns_named() -> None:
    table = Table("t", ["model", "n", "score"], [["a | b", 3, 0.5]])
    assert markdown(table, right=(1, 2)) == (
        "| model | n | score |\n|---|---:|---:|\n| a \\| b | 3 | 0.50 |"
    )
