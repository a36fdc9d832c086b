"""Hostile and careless inputs against the real commands: each is refused with one line and exit
2 before anything changes, or succeeds changing nothing but the command's own output. Every case
runs in a sandbox of the user's files (a folder, a file, entries named like temporaries of a dead
process), a finished run of ours and a small dataset; the whole sandbox is hashed before and after
(:func:`tests.bla_eval.commands.tree_hashes`), links included.

Tables: :data:`FILE_CASES` (what a command may write: symbolic links, markers, look-alike
temporaries), :data:`INPUT_CASES` (inputs named in the error line: datasets, launcher variables,
time options, Hub ids), :data:`PROCESS_CASES` (the same rules in either process of a two-process
run, as ``torchrun`` starts it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs.files import LOCK_FILE, RUN_FILE, SCORES_FILE

from tests.bla_eval.commands import LIMIT, call, eval_args, only_own_changes, refused, tree_hashes

pytestmark = pytest.mark.usefixtures("one_thread")

CO_FILE = "data/coordination/test-00000-of-00001.parquet"


@dataclass(frozen=True)
class Case:
    """One hostile input: ``prepare(sandbox)`` sets the scene, ``argv(sandbox)`` is the command
    line; exit 2 with ``fragment`` in the line (``{sandbox}`` filled in), or exit 0 changing only
    ``own`` (paths relative to the sandbox)."""

    argv: Callable[[Sandbox], list[object]]
    fragment: str = ""
    prepare: Callable[[Sandbox], None] = lambda s: None
    env: dict[str, str] = field(default_factory=dict)
    own: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sandbox:
    root: Path
    model: Path
    data: Path

    @property
    def run(self) -> Path:
        """A finished run of ours (a copy per case)."""
        return self.root / "run"

    @property
    def parent(self) -> Path:
        """A folder holding entries named like temporaries of a dead process (the user's)."""
        return self.root / "parent"

    def run_args(self, out: Path, *extra: object) -> list[object]:
        return eval_args(self.model, self.data, out, "--tasks", "co", "--limit", LIMIT, *extra)


def dead_pid() -> int:
    code = "import os; print(os.getpid())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)


@pytest.fixture(scope="module")
def small_data(built_dataset, tmp_path_factory) -> Path:
    """A dataset folder with the coordination test config only: its first 3 rows."""
    out = tmp_path_factory.mktemp("small_data") / "bla"
    (out / CO_FILE).parent.mkdir(parents=True)
    table = pq.read_table(built_dataset / CO_FILE).slice(0, LIMIT)
    pq.write_table(table, out / CO_FILE, compression="snappy")
    return out


@pytest.fixture(scope="module")
def small_run(tiny_clip, small_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("own_run") / "run"
    argv = eval_args(tiny_clip, small_data, out, "--tasks", "co", "--limit", LIMIT)
    assert bla_eval(argv) == 0
    return out


@pytest.fixture
def sandbox(tmp_path, tiny_clip, small_data, small_run) -> Sandbox:
    """The user's files, look-alikes of our temporaries, a finished run of ours."""
    dead = dead_pid()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("\\chapter{Mine}\n")
    (tmp_path / "outside.txt").write_text((small_run / SCORES_FILE).read_text())
    parent = tmp_path / "parent"
    for name in (f".photos.bla-staging-{dead}", f".an.bla-staging-{dead}", f".an.bla-tmp-{dead}"):
        (parent / name).mkdir(parents=True)
        (parent / name / "holiday.jpg").write_bytes(b"jpeg")
    (parent / f".an.bla-replaced-{dead}").mkdir()  # would be "put back" as parent/an
    shutil.copytree(small_run, tmp_path / "run")
    return Sandbox(tmp_path, tiny_clip, small_data)


def link(path: Path, target: Path) -> None:
    """``path`` replaced by a symbolic link to ``target``."""
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target, target_is_directory=target.is_dir())


def user_run_copy(s: Sandbox) -> None:
    """A folder of the user's that holds the files of a run (``run.json`` with a run's keys)
    but no marker of ours."""
    shutil.copytree(s.run, s.root / "copied", ignore=shutil.ignore_patterns(".bla-*"))


FILE_CASES: dict[str, Case] = {
    "analyze-beside-look-alike-temporaries": Case(
        lambda s: ["analyze", s.run, "--output", s.parent / "an", "--examples", "0"],
        own=("parent/an",),
    ),
    "resume-appends-through-a-linked-scores-file": Case(
        lambda s: s.run_args(s.run, "--resume"),
        "{sandbox}/run/scores.jsonl is a symbolic link",
        lambda s: link(s.run / SCORES_FILE, s.root / "outside.txt"),
    ),
    "fresh-run-over-a-linked-scores-file": Case(
        lambda s: s.run_args(s.run),
        "scores.jsonl is a symbolic link",
        lambda s: link(s.run / SCORES_FILE, s.root / "outside.txt"),
    ),
    "resume-folds-a-linked-part": Case(
        lambda s: s.run_args(s.run, "--resume"),
        "scores.part-0-of-2.jsonl is a symbolic link",
        lambda s: link(s.run / "scores.part-0-of-2.jsonl", s.root / "outside.txt"),
    ),
    "linked-results-json": Case(
        lambda s: s.run_args(s.run),
        "results.json is a symbolic link",
        lambda s: link(s.run / "results.json", s.root / "outside.txt"),
    ),
    "linked-endpoint-cache": Case(
        lambda s: s.run_args(s.run),
        "api-cache is a symbolic link",
        lambda s: link(s.run / "api-cache", s.root / "mine"),
    ),
    "linked-lock-file": Case(
        lambda s: s.run_args(s.run),
        f"{LOCK_FILE} is a symbolic link",
        lambda s: link(s.run / LOCK_FILE, s.root / "outside.txt"),
    ),
    "linked-marker": Case(
        lambda s: s.run_args(s.root / "copied"),
        "copied/.bla-output.json is a symbolic link",
        lambda s: (
            user_run_copy(s),
            link(s.root / "copied" / ".bla-output.json", s.run / ".bla-output.json"),
        ),
    ),
    "run-json-without-marker": Case(
        lambda s: s.run_args(s.root / "copied", "--resume"),
        "is not empty and is not a bla-eval run folder",
        user_run_copy,
    ),
    "export-through-a-linked-eval-results": Case(
        lambda s: ["export", s.run],
        "{sandbox}/run/.eval_results is a symbolic link",
        lambda s: link(s.run / ".eval_results", s.root / "mine"),
    ),
    "export-over-a-user-file": Case(
        lambda s: ["export", s.run, "--output", s.root / "mine"],
        "was not written by `bla-eval export`",
        lambda s: (
            (s.root / "mine" / ".eval_results").mkdir(),
            (s.root / "mine" / ".eval_results" / "bla.yaml").write_text("mine: 1\n"),
        ),
    ),
    "export-into-a-linked-output-folder": Case(
        lambda s: ["export", s.run, "--output", s.root / "lnk", "--allow-partial"],
        "{sandbox}/lnk is a symbolic link",
        lambda s: link(s.root / "lnk", s.root / "mine"),
    ),
    "export-model-index-through-a-link": Case(
        lambda s: ["export", s.run, "--format", "model-index", "--output", s.root / "mine"],
        "model-index.yaml is a symbolic link",
        lambda s: link(s.root / "mine" / "model-index.yaml", s.root / "outside.txt"),
    ),
    "export-next-to-a-look-alike": Case(
        lambda s: [
            "export",
            s.run,
            "--format",
            "model-index",
            "--allow-partial",
            "--output",
            s.root / "parent",
        ],
        own=("parent/model-index.yaml",),
    ),
    "analyze-into-a-link": Case(
        lambda s: ["analyze", s.run, "--output", s.root / "lnk", "--examples", "0"],
        "is a symbolic link",
        lambda s: link(s.root / "lnk", s.root / "mine"),
    ),
    "compare-into-a-user-folder": Case(
        lambda s: ["compare", s.run, s.run, "--output", s.root / "mine"],
        "is not empty and was not written by `bla-eval compare`",
    ),
    "run-into-a-user-folder-beside-look-alikes": Case(
        lambda s: s.run_args(s.parent / "an"),
        own=("parent/an",),
    ),
}


def damaged(s: Sandbox, how: str) -> None:
    """A copy of the small dataset as ``s.root / "data"`` with its parquet file damaged."""
    shutil.copytree(s.data, s.root / "data")
    path = s.root / "data" / CO_FILE
    body = path.read_bytes()
    if how == "empty":
        pq.write_table(pq.read_table(s.data / CO_FILE).slice(0, 0), path)
    elif how == "truncated":
        path.write_bytes(body[: len(body) // 2])
    else:  # the compressed pages overwritten, the footer intact
        third = len(body) // 3
        path.write_bytes(body[:third] + b"\xff" * third + body[2 * third :])


def on_damaged(how: str) -> Callable[[Sandbox], None]:
    return lambda s: damaged(s, how)


def with_data(s: Sandbox, data: Path, out: str = "new", *extra: object) -> list[object]:
    return eval_args(s.model, data, s.root / out, "--tasks", "co", "--limit", LIMIT, *extra)


TWO = {"WORLD_SIZE": "2", "RANK": "0"}
INPUT_CASES: dict[str, Case] = {
    "empty-dataset-config": Case(
        lambda s: with_data(s, s.root / "data"), f"{CO_FILE} has no rows", on_damaged("empty")
    ),
    "corrupt-parquet-pages": Case(
        lambda s: with_data(s, s.root / "data"), CO_FILE, on_damaged("pages")
    ),
    "truncated-parquet": Case(
        lambda s: with_data(s, s.root / "data"),
        f"{CO_FILE} is not a readable parquet file",
        on_damaged("truncated"),
    ),
    "dataset-is-a-file": Case(
        lambda s: with_data(s, s.root / "outside.txt"), "outside.txt is a file, not a folder"
    ),
    "world-size-not-a-number": Case(
        lambda s: s.run_args(s.root / "new"),
        "environment variable WORLD_SIZE='abc' is not a whole number",
        env={"WORLD_SIZE": "abc"},
    ),
    "rank-not-a-number": Case(
        lambda s: s.run_args(s.root / "new"),
        "environment variable RANK='x'",
        env={"WORLD_SIZE": "2", "RANK": "x"},
    ),
    "local-rank-a-fraction": Case(
        lambda s: s.run_args(s.root / "new"),
        "environment variable LOCAL_RANK='1.5'",
        env={**TWO, "LOCAL_RANK": "1.5"},
    ),
    **{
        f"barrier-timeout-{value}": Case(
            lambda s: s.run_args(s.root / "new"),
            "environment variable BLA_EVAL_DIST_TIMEOUT_S must be a number from 1 to 2592000, got "
            f"'{value}'",
            env={**TWO, "BLA_EVAL_DIST_TIMEOUT_S": value},
        )
        for value in ("1e308", "nan", "inf", "abc", "0")
    },
    **{
        f"request-timeout-{value}": Case(
            lambda s, v=value: s.run_args(s.root / "new", "--request-timeout", v),
            "argument --request-timeout: must be a number from 0.001 to 86400",
        )
        for value in ("1e308", "inf", "nan", "0", "-5")
    },
    **{
        f"export-dataset-id-{n}": Case(
            lambda s, v=value: ["export", s.run, "--dataset-id", v],
            f"--dataset-id {value!r} is not a Hub repo id",
        )
        for n, value in enumerate(("../../etc/passwd", "a/b/c", "", "org/bad name", "org/x..y"))
    },
    "analyze-a-file": Case(
        lambda s: ["analyze", s.root / "outside.txt"], "outside.txt is a file, not a bla-eval run"
    ),
}


def part_link(rank: int) -> Callable[[Sandbox], None]:
    return lambda s: link(s.run / f"scores.part-{rank}-of-2.jsonl", s.root / "outside.txt")


PROCESS_CASES: dict[str, Case] = {
    f"rank-{rank}-{name}": Case(argv, fragment, prepare, env={"WORLD_SIZE": "2", "RANK": rank})
    for rank in ("0", "1")
    for name, (argv, fragment, prepare) in {
        "resume-with-its-part-linked": (
            lambda s: s.run_args(s.run, "--resume"),
            "is a symbolic link",
            lambda s, r=rank: part_link(int(r))(s),
        ),
        "resume-with-the-other-part-linked": (
            lambda s: s.run_args(s.run, "--resume"),
            "is a symbolic link",
            lambda s, r=rank: part_link(1 - int(r))(s),
        ),
        "fresh-run-over-a-linked-part": (
            lambda s: s.run_args(s.run),
            "is a symbolic link",
            part_link(1),
        ),
        "run-json-without-marker": (
            lambda s: s.run_args(s.root / "copied", "--resume"),
            "is not a bla-eval run folder",
            user_run_copy,
        ),
        "into-a-user-folder": (
            lambda s: s.run_args(s.root / "mine"),
            "is not empty and is not a bla-eval run folder",
            lambda s: None,
        ),
    }.items()
}

ALL = {**FILE_CASES, **INPUT_CASES, **PROCESS_CASES}


@pytest.mark.parametrize("name", sorted(ALL))
def test_a_hostile_input_changes_nothing_but_the_commands_own_output(
    name, sandbox, capsys, monkeypatch
):
    case = ALL[name]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "BLA_EVAL_DIST_TIMEOUT_S"):
        monkeypatch.delenv(key, raising=False)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    case.prepare(sandbox)
    before = tree_hashes(sandbox.root)
    argv = [str(a) for a in case.argv(sandbox)]
    if case.fragment:
        refused(bla_eval, argv, capsys, case.fragment.format(sandbox=sandbox.root))
    else:
        code, err = call(bla_eval, argv, capsys)
        assert code == 0, err
    only_own_changes(before, tree_hashes(sandbox.root), *case.own)
    if case.own:
        assert (sandbox.root / case.own[0]).exists()


def test_a_resume_never_truncates_or_appends_through_a_link(sandbox, capsys):
    """The probe's case: ``scores.jsonl`` pointed outside the run, a half line at the end of the
    file it points to; the resume is refused and the file keeps its bytes."""
    outside = sandbox.root / "outside.txt"
    outside.write_text(outside.read_text() + '{"task": "co", "id": "co-9", "sco')
    before = outside.read_bytes()
    link(sandbox.run / SCORES_FILE, outside)
    refused(bla_eval, [str(a) for a in sandbox.run_args(sandbox.run, "--resume")], capsys, "link")
    assert outside.read_bytes() == before
    assert json.loads((sandbox.run / RUN_FILE).read_text())["model"]  # run.json untouched
