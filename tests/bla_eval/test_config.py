"""``RunConfig``: settings refused before anything runs: the names shown in tables (``--name``,
``--model``), an option the model's kind does not read (one table says which kind reads which),
``--resume`` with ``--overwrite``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.config import RunConfig, option
from bla_eval.runs import RESULTS_FILE, SCORES_FILE

from tests.bla_eval.commands import call, eval_args, refused, snapshot

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


@pytest.mark.parametrize("name, named", BAD_NAMES.values(), ids=list(BAD_NAMES))
def test_a_model_name_that_tables_cannot_show_is_refused_at_the_option(
    name, named, tmp_path, capsys
):
    """An endpoint's model name goes into results.json and every table: the same characters
    as ``--name`` are refused, in one line, before anything is made."""
    out = tmp_path / "run"
    argv = ["--model", f"org/m:{name}", "--endpoint", "http://127.0.0.1:9/v1", "--output", out]
    with pytest.raises(SystemExit) as stop:
        bla_eval([str(a) for a in argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--model" in err[0] and named in err[0], err
    assert not out.exists()
    with pytest.raises(ValueError, match=f"model .* {re.escape(named)}"):
        RunConfig(f"org/m:{name}", out, endpoint="http://127.0.0.1:9/v1")


UNREAD = {
    "vllm engine, eager": (["--enforce-eager"], "--enforce-eager: model kind 'contrastive'"),
    "vllm engine, parallel": (["--tensor-parallel-size", "2"], "runs no engine of its own"),
    "vllm engine, length": (["--max-model-len", "64"], "--max-model-len 64: model kind"),
    "placement": (["--device-map", "auto"], "places no model by device_map"),
    "endpoint setting": (["--concurrency", "3"], "is served behind no endpoint"),
    "endpoint flag": (["--text-only"], "--text-only: model kind 'contrastive'"),
    "likelihood": (["--score", "caption"], "has no sentence likelihood"),
    "question": (["--prompt", "blip2"], "asks no question"),
}


@pytest.mark.parametrize("extra, fragment", UNREAD.values(), ids=list(UNREAD))
def test_an_option_the_kind_does_not_read_is_refused(
    extra, fragment, tiny_clip, built_dataset, tmp_path, capsys
):
    out = tmp_path / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--limit", "1", *extra)
    refused(bla_eval, argv, capsys, fragment)
    assert not out.exists()


def test_every_setting_says_which_kinds_read_it():
    """One table: each field of ``RunConfig`` is read by every kind or by the kinds a scorer
    attribute names; a setting added without its row is refused when the module loads."""
    from dataclasses import dataclass, fields

    from bla_eval.config import EVERY_KIND, KIND_READS, check_kind_table
    from bla_eval.scorers.base import Scorer

    names = {f.name for f in fields(RunConfig)}
    assert names == KIND_READS.keys() | EVERY_KIND and not KIND_READS.keys() & EVERY_KIND
    assert all(isinstance(getattr(Scorer, reads), bool) for reads, _ in KIND_READS.values())

    @dataclass(frozen=True)
    class Grown(RunConfig):
        new_setting: int = option(0, "a setting added later")

    with pytest.raises(TypeError, match="new_setting"):
        check_kind_table(Grown)


def test_resume_and_overwrite_together_are_refused(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(co_run, run)
    before = snapshot(tmp_path)
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", "3")
    refused(bla_eval, [*argv, "--resume", "--overwrite"], capsys, "--resume and --overwrite")
    assert snapshot(tmp_path) == before


def bounded_fields() -> list:
    from dataclasses import fields

    return [f for f in fields(RunConfig) if "bounds" in f.metadata]


@pytest.mark.parametrize("f", bounded_fields(), ids=lambda f: f.name)
def test_each_bound_is_declared_once_and_read_by_the_parser_and_the_settings(f, tmp_path, capsys):
    """A field's bounds (``cli_common.bounded``) refuse the value just outside them in the
    parser and in ``RunConfig``, with the field's type (a count takes whole numbers only)."""
    import typing

    low, high = f.metadata["bounds"]
    whole = isinstance(low, int) and isinstance(high, int)
    hint = typing.get_type_hints(RunConfig)[f.name]
    assert (int in typing.get_args(hint) or hint is int) == whole, f.name
    flag = "--" + f.name.replace("_", "-")
    given = {"score": "caption-pmi"} if f.name == "pmi_alpha" else {}  # its only reader
    for outside in (low - 1, high + 1) if whole else (-1e308 if low == 0 else low / 2, high * 2):
        argv = ["--model", "m", "--output", tmp_path / "o", f"{flag}={outside}"]
        refused(bla_eval, argv, capsys, f"argument {flag}: must be")
        with pytest.raises(ValueError, match=f"^{f.name} must be"):
            RunConfig("m", tmp_path / "o", **given, **{f.name: outside})
    for inside in (low, high):
        assert getattr(RunConfig("m", "o", **given, **{f.name: inside}), f.name) == inside


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("top_logprobs", 0, "top_logprobs must be at least 1, got 0"),
        ("top_logprobs", 10**9, "top_logprobs must be at most 20, got 1000000000"),
        ("top_logprobs", "5", "top_logprobs must be a whole number, got '5'"),
        ("top_logprobs", True, "top_logprobs must be a whole number, got True"),
        ("max_answer_tokens", -1, "max_answer_tokens must be at least 1, got -1"),
        ("request_timeout", float("nan"), "request_timeout must be a number from 0.001 to 86400"),
        ("price_input", float("inf"), "price_input must be a number from 0 to 1e+06, got inf"),
        ("pmi_alpha", -0.5, "pmi_alpha must be a number from 0 to 10, got -0.5"),
    ],
)
def test_a_value_outside_its_fields_bounds_is_named(name, value, message):
    """``check_field``: the check ``RunConfig`` and the inspect tasks' ``-T`` parameters make."""
    from bla_eval.cli_common import check_field

    with pytest.raises(ValueError, match=re.escape(message)):
        check_field(RunConfig, name, value)
    assert check_field(RunConfig, name, None if name == "pmi_alpha" else 1) in (None, 1)


def test_the_load_options_are_the_runs_settings_of_their_names():
    """``RunConfig.settings_for``: each ``LoadOptions`` field that ``RunConfig`` declares takes
    the run's value (or what the run resolved), with ``RunConfig``'s default."""
    from dataclasses import fields

    from bla_eval.scorers import LoadOptions

    shared = [f for f in fields(LoadOptions) if f.name in RunConfig.__dataclass_fields__]
    assert {f.name for f in fields(LoadOptions)} - {f.name for f in shared} == {"api"}
    defaults = RunConfig("m", "o")
    assert all(f.default == getattr(defaults, f.name) for f in shared)
    config = RunConfig("m", "o", similarity="clipscore", dtype="float16", enforce_eager=True)
    options = config.settings_for(LoadOptions, device="cpu", regions=None)
    assert (options.similarity, options.dtype, options.enforce_eager) == (
        "clipscore",
        "float16",
        True,
    )
    assert options.device == "cpu" and options.api is None
    with pytest.raises(TypeError, match="unknown_setting"):
        config.settings_for(LoadOptions, unknown_setting=1)
