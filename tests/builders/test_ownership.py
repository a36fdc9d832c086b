"""Hostile and careless outputs of the builders that write one folder or one file: ``space``,
``metric-space`` (a folder marked ``.bla-output.json``) and ``calibrate --out`` (a JSON file with
its ``written_by`` key). Each is refused with one line and exit 2, or written changing nothing but
the command's own output; the sandbox is hashed before and after (links included)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from bla_eval.outputs import MARK_KEY

from builders.__main__ import main
from tests.bla_eval.commands import call, only_own_changes, refused, tree_hashes

REQUIREMENT = "bla-benchmark[space] @ git+https://github.com/bla-org/bla@0123456789abcdef"
DEPLOYS = {
    "space": ["space", "--requirement", REQUIREMENT],
    "metric-space": ["metric-space"],
}


@dataclass(frozen=True)
class Case:
    """``prepare(root)`` sets the scene; the output is ``out`` (relative to the sandbox); exit 2
    with ``fragment`` in the line, or exit 0 changing only ``out``."""

    out: str
    fragment: str = ""
    prepare: Callable[[Path], None] = lambda root: None


def dead_pid() -> int:
    code = "import os; print(os.getpid())"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True).stdout)


@pytest.fixture
def sandbox(tmp_path, monkeypatch) -> Path:
    """The user's folder and file, and entries named like temporaries of a dead process."""
    dead = dead_pid()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("\\chapter{Mine}\n")
    (tmp_path / "notes.txt").write_text("my notes\n")
    for name in (f".out.bla-staging-{dead}", f".photos.bla-staging-{dead}"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "holiday.jpg").write_bytes(b"jpeg")
    (tmp_path / f".out.bla-replaced-{dead}" / "out").mkdir(parents=True)  # "put back" as out/
    (tmp_path / f".calib.json.bla-tmp-{dead}").write_text("mine")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def linked(name: str, target: str) -> Callable[[Path], None]:
    return lambda root: (root / name).symlink_to(root / target)


def built(command: str, *then: Callable[[Path], None]) -> Callable[[Path], None]:
    """An earlier output of ``command`` (a deploy) as ``out``, then ``then`` applied."""

    def prepare(root: Path) -> None:
        assert main([*DEPLOYS[command], "--out", str(root / "out")]) == 0
        for step in then:
            step(root)

    return prepare


def fake_build(root: Path) -> None:
    """A dataset build of ours (a manifest of ``python -m builders release``)."""
    (root / "out").mkdir()
    manifest = {"builder": "python -m builders release", "files": {"README.md": "x"}}
    (root / "out" / "manifest.json").write_text(json.dumps(manifest))
    (root / "out" / "README.md").write_text("card\n")


def deploy_cases(command: str) -> dict[str, Case]:
    other = "metric-space" if command == "space" else "space"
    return {
        "new-beside-look-alikes": Case("out"),
        "its-own-output-again": Case("out", "", built(command)),
        "a-user-folder": Case("mine", "is not empty and was not written by"),
        "a-user-file": Case("notes.txt", "exists and is not a folder"),
        "a-folder-under-a-file": Case("notes.txt/sub", "notes.txt, which is a file"),
        "a-link-to-a-folder": Case("lnk", "is a symbolic link", linked("lnk", "mine")),
        "a-dangling-link": Case("lnk", "is a symbolic link", linked("lnk", "nowhere")),
        "the-other-deploys-output": Case("out", "holds the output of", built(other)),
        "a-dataset-build": Case("out", "output of `python -m builders release`", fake_build),
        "its-output-plus-a-user-file": Case(
            "out",
            "did not write (notes.md)",
            built(command, lambda r: (r / "out" / "notes.md").write_text("mine")),
        ),
        "its-output-plus-a-link": Case(
            "out",
            "did not write (lnk)",
            built(command, lambda r: (r / "out" / "lnk").symlink_to(r / "mine")),
        ),
        "its-output-with-a-linked-marker": Case(
            "out",
            "was not written by",
            built(
                command,
                lambda r: (r / "out" / ".bla-output.json").rename(r / "marker.json"),
                linked("out/.bla-output.json", "marker.json"),
            ),
        ),
        "the-working-directory": Case(".", "is the working directory or holds it"),
        "its-parent": Case("..", "is the working directory or holds it"),
    }


@pytest.fixture(scope="module")
def scores(small, tmp_path_factory) -> Path:
    """Sentence scores of every sentence of the miniature release: ``--scores`` reuses them,
    so calibrating loads no model."""
    from builders.construct.calibrate import release_sets

    sentences = {s for groups in release_sets(small).values() for g in groups for s in g}
    values = {s: round((hash(s) % 1000) / 100 - 5, 3) for s in sorted(sentences)}
    path = tmp_path_factory.mktemp("scores") / "scores.json"
    document = {"scorer": "t", "sentence_scores": values, "model_load_s": 0, "scoring_s": 0}
    path.write_text(json.dumps(document))
    return path


def calibrated(root: Path, small: Path, scores: Path) -> None:
    argv = ["calibrate", "--release", str(small), "--scores", str(scores)]
    assert main([*argv, "--out", str(root / "calib.json")]) == 0


CALIBRATE_CASES: dict[str, Case] = {
    "new-beside-a-look-alike": Case("calib.json"),
    "its-own-output-again": Case("calib.json", "", lambda r: None),  # prepared in the test
    "a-user-file": Case(
        "notes.txt", "exists and was not written by `python -m builders calibrate`"
    ),
    "a-link-to-a-user-file": Case(
        "lnk.json", "is a symbolic link", linked("lnk.json", "notes.txt")
    ),
    "a-dangling-link": Case("lnk.json", "is a symbolic link", linked("lnk.json", "nowhere.json")),
    "a-link-to-a-folder": Case("lnk", "is a symbolic link", linked("lnk", "mine")),
    "a-file-in-a-linked-folder": Case(
        "lnk/calib.json", "lnk is a symbolic link", linked("lnk", "mine")
    ),
    "a-folder": Case("mine", "is a folder; give a file name"),
    "a-dataset-manifest": Case("out/manifest.json", "was not written by", fake_build),
    "another-commands-json": Case(
        "other.json",
        "was not written by",
        lambda r: (r / "other.json").write_text(json.dumps({MARK_KEY: "python -m builders x"})),
    ),
    "a-json-array": Case(
        "list.json", "was not written by", lambda r: (r / "list.json").write_text("[1]")
    ),
}

CASES = {
    **{f"{c}-{n}": (c, case) for c in DEPLOYS for n, case in deploy_cases(c).items()},
    **{f"calibrate-{n}": ("calibrate", case) for n, case in CALIBRATE_CASES.items()},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_builder_writes_only_its_own_output(name, sandbox, small, scores, capsys):
    command, case = CASES[name]
    case.prepare(sandbox)
    if name == "calibrate-its-own-output-again":
        calibrated(sandbox, small, scores)
    before = tree_hashes(sandbox)
    if command == "calibrate":
        argv = ["calibrate", "--release", small, "--scores", scores, "--out", case.out]
    else:
        argv = [*DEPLOYS[command], "--out", case.out]
    if case.fragment:
        refused(main, [str(a) for a in argv], capsys, case.fragment)
        only_own_changes(before, tree_hashes(sandbox))
        return
    code, err = call(main, [str(a) for a in argv], capsys)
    assert code == 0, err
    only_own_changes(before, tree_hashes(sandbox), case.out)
    if command == "calibrate":
        assert (
            json.loads((sandbox / case.out).read_text())[MARK_KEY] == "python -m builders calibrate"
        )
    else:
        assert json.loads((sandbox / case.out / ".bla-output.json").read_text())["command"]
