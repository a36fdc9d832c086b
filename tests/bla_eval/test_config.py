"""``RunConfig``: settings refused before anything runs (here the display name of ``--name``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.config import RunConfig
from bla_eval.runs import RESULTS_FILE, SCORES_FILE

from tests.bla_eval.commands import call, eval_args

pytestmark = pytest.mark.usefixtures("one_thread")

BAD_NAMES = {
    "right-to-left override": ("clip\u202eevil", "U+202E"),
    "a control character": ("clip\x1b[2J", "U+001B"),
    "a line separator": ("clip\u2028two", "U+2028"),
    "byte 0xff": (os.fsdecode(b"clip\xff"), "0xff, which is not UTF-8"),
}


@pytest.mark.parametrize("name, named", BAD_NAMES.values(), ids=list(BAD_NAMES))
def test_a_display_name_that_tables_cannot_show_is_refused_at_the_option(
    name, named, tiny_clip, built_dataset, tmp_path, capsys
):
    out = tmp_path / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--limit", "1", "--name", name)
    with pytest.raises(SystemExit) as stop:
        bla_eval(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--name" in err[0] and named in err[0], err
    assert not out.exists()  # nothing scored, nothing made
    with pytest.raises(ValueError, match=f"name .* {re.escape(named)}"):
        RunConfig(str(tiny_clip), out, name=name)


def test_a_stopped_run_resumes_under_a_good_name_after_a_bad_one(
    tiny_clip, built_dataset, tmp_path, capsys
):
    """A run stopped after some records: --resume with a bad name is refused before anything is
    touched, and the same resume with a printable name finishes it."""
    out = tmp_path / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", "4")
    assert call(bla_eval, argv, capsys)[0] == 0
    (out / RESULTS_FILE).unlink()
    lines = (out / SCORES_FILE).read_bytes().splitlines(keepends=True)
    (out / SCORES_FILE).write_bytes(b"".join(lines[:2]))
    kept = (out / SCORES_FILE).read_bytes()
    bad = os.fsdecode(b"tiny \xff")
    with pytest.raises(SystemExit):
        bla_eval([*argv, "--resume", "--name", bad])
    assert (out / SCORES_FILE).read_bytes() == kept and not (out / RESULTS_FILE).exists()
    capsys.readouterr()
    assert call(bla_eval, [*argv, "--resume", "--name", "tiny clip"], capsys)[0] == 0
    assert (out / RESULTS_FILE).read_text(encoding="utf-8").count('"display_name": "tiny clip"')


def test_a_printable_name_is_kept_as_given(tiny_clip, tmp_path: Path):
    name = "CLIP ViT-B/32 · 日本語 (ünïcode)"
    assert RunConfig(str(tiny_clip), tmp_path / "run", name=name).name == name
