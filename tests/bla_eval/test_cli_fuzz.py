"""Fuzzing the command lines of ``bla-eval`` (runs and every subcommand) and ``bla-finetune``:
random options and values, with random existing files and folders as outputs and inputs.

Each example runs in a fresh sandbox (the working directory) holding the user's own folder,
file and a folder named like a temporary of a process that is gone, an empty folder, a symbolic
link, and two finished runs of ours. Whatever the command and
its exit code: no traceback, an error is one line, the user's files are untouched, an existing
file of a run is changed only by ``bla-eval`` writing that run, and every run folder whose
``results.json`` exists agrees with its ``scores.jsonl``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch
from bla_eval.cli import main as bla_eval
from bla_eval.finetune.cli import main as bla_finetune
from bla_eval.runs import RESULTS_FILE, RunFolder
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow

EXAMPLES = 60
"""Examples per command: 420 in all, under a minute on two shared cores."""

OUTPUTS = [
    "mine",
    "notes.txt",
    "empty",
    "link",
    "run",
    "learning",
    "new",
    "new/deeper",
    ".",
    "..",
    "run/analysis",
    "run/scores.jsonl",
    "mine/sub",
    "notes.txt/sub",
]
"""Paths a command may be asked to write (relative to the sandbox)."""
RUNS = ["run", "learning", "mine", "notes.txt", "empty", "nope", "link"]
"""Paths a command may be asked to read as a run."""
LOOK_ALIKE = ".photos.bla-staging-999999999"
"""A folder of the user's named like a temporary of a process that is gone (no marker inside)."""
USER = ("mine", "notes.txt", LOOK_ALIKE)
"""The user's own files and folders: never changed by any command."""


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def finished(tiny_clip, built_dataset, tmp_path_factory) -> dict[str, Path]:
    """Two finished runs of ours: CO (2 datapoints) and the CO learning test split."""
    base = tmp_path_factory.mktemp("fuzz_runs")
    runs = {"run": ("co",), "learning": ("coordination_learning",)}
    for name, tasks in runs.items():
        argv = ["--model", str(tiny_clip), "--output", str(base / name), "--data"]
        argv += [str(built_dataset), "--tasks", *tasks, "--limit", "2", "--device", "cpu"]
        assert bla_eval(argv) == 0
    return {name: base / name for name in runs}


def make_sandbox(root: Path, finished: dict[str, Path]) -> None:
    (root / "mine").mkdir()
    (root / "mine" / "thesis.tex").write_text("\\chapter{Mine}\n", encoding="utf-8")
    (root / "mine" / "results.json").write_text('{"mine": 1}\n', encoding="utf-8")
    (root / "mine" / "scores.jsonl").write_text('{"task": "x", "id": "1", "scores": [1]}\n')
    (root / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (root / "empty").mkdir()
    (root / LOOK_ALIKE).mkdir()
    (root / LOOK_ALIKE / "holiday.jpg").write_bytes(b"jpeg")
    (root / "link").symlink_to(root / "mine", target_is_directory=True)
    for name, run in finished.items():
        shutil.copytree(run, root / name)


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links not followed) -> its bytes."""
    if root.is_file():
        return {"": root.read_bytes()}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".bla-" not in p.name
    }


def optional(flag: str, values: list[str]) -> st.SearchStrategy[list[str]]:
    """No ``flag``, or ``flag`` with one of ``values``."""
    return st.one_of(st.just([]), st.sampled_from(values).map(lambda v: [flag, v]))


def switch(flag: str) -> st.SearchStrategy[list[str]]:
    return st.sampled_from([[], [flag]])


def joined(*parts: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    return st.tuples(*parts).map(lambda lists: [a for part in lists for a in part])


def poisoned(
    valid: st.SearchStrategy[list[str]], poisons: list[list[str]]
) -> st.SearchStrategy[list[str]]:
    """Valid arguments, a third of the time followed by one bad option (argparse keeps the last
    value of an option, so it replaces the valid one)."""
    poison = st.one_of(st.just([]), st.just([]), st.sampled_from(poisons))
    return st.tuples(valid, poison).map(lambda parts: parts[0] + parts[1])


def outputs(flag: str = "--output") -> st.SearchStrategy[list[str]]:
    """An output: as often a new folder as any path of :data:`OUTPUTS`."""
    fresh = st.sampled_from(["fresh", "fresh2/deeper"])
    return st.one_of(fresh, st.sampled_from(OUTPUTS)).map(lambda o: [flag, o])


def runs(count: int = 1) -> st.SearchStrategy[list[str]]:
    """``count`` runs to read: mostly ours, sometimes anything else of the sandbox."""
    return st.lists(st.sampled_from([*RUNS[:2], *RUNS[:2], *RUNS]), min_size=count, max_size=count)


def run_argv(clip: str, data: str) -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["--model", clip, "--data", data]),
        outputs(),
        st.sampled_from(["1", "2"]).map(lambda v: ["--limit", v]),
        optional("--tasks", ["co", "ap", "co,rc", "coordination_learning"]),
        optional("--batch-size", ["1", "8"]),
        optional("--images-per-batch", ["1", "4"]),
        optional("--device", ["cpu"]),
        optional("--kind", ["contrastive"]),
        optional("--similarity", ["cosine", "clipscore"]),
        switch("--resume"),
    )
    bad = [["--limit", v] for v in ("0", "-1", "x", "99999999999")]
    bad += [["--model", "/no/such/model"], ["--data", "/no/such/data"], ["--data", "mine"]]
    bad += [["--tasks", "nope"], ["--batch-size", "5000"], ["--images-per-batch", "0"]]
    bad += [["--device", d] for d in ("tpu9", "cuda", "cuda:x")]
    bad += [["--kind", k] for k in ("itm", "text", "open_clip", "magic")]
    bad += [["--protocol", "icl-sd"], ["--protocol", "paper"], ["--split", "train"]]
    bad += [["--benchmark", "valse"], ["--benchmark", "glue"], ["--dtype", "float7"]]
    return poisoned(valid, bad)


def analyze_argv(data: str) -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["analyze"]),
        runs(),
        st.one_of(st.just([]), outputs()),
        optional("--examples", ["0", "1"]),
        st.just(["--data", data]),
    )
    bad = [["--examples", v] for v in ("-1", "x", "1000")] + [["--data", "/nope"]]
    return poisoned(valid, bad)


def compare_argv() -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["compare"]),
        runs(2),
        st.one_of(st.just([]), outputs()),
        optional("--resamples", ["1", "10"]),
        optional("--seed", ["0", "7"]),
    )
    bad = [["--resamples", v] for v in ("0", "100000000000000", "x")]
    return poisoned(valid, bad + [["--seed", "-1"], ["--seed", "99999999999"]])


def export_argv() -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["export"]),
        runs(),
        optional("--format", ["eval-results", "model-index"]),
        st.one_of(st.just([]), outputs()),
        st.sampled_from([[], ["--push", "--dry-run", "--repo-id", "org/model"]]),
    )
    bad = [["--format", "csv"], ["--push"], ["--push", "--repo-id", "org/model"]]
    bad += [["--push", "--dry-run", "--repo-id", r] for r in ("../../etc/passwd", "a/b/c", "")]
    return poisoned(valid, bad)


def report_argv() -> st.SearchStrategy[list[str]]:
    valid = joined(st.just(["learning-report"]), runs(), st.one_of(st.just([]), outputs()))
    return poisoned(valid, [["nope"], ["run"], ["mine"]])


def reproduce_argv() -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["reproduce"]),
        st.sampled_from([["--list"], ["clip", "--run"], ["clip", "--run"]]),
        runs(),
        optional("--resamples", ["0", "10"]),
    )
    bad = [["--resamples", "-1"], ["--resamples", "100000000000000"], ["--run", "nope"]]
    return poisoned(valid, bad)


def finetune_argv(clip: str, data: str) -> st.SearchStrategy[list[str]]:
    valid = joined(
        st.just(["--model", clip, "--task", "co", "--data", data, "--eval-tasks", "co"]),
        st.just(["--batch-size", "64", "--epochs", "1"]),
        outputs(),
        st.sampled_from(["1", "2"]).map(lambda v: ["--limit", v]),
        optional("--device", ["cpu"]),
        switch("--overwrite"),
    )
    bad = [["--model", "/no/such/model"], ["--task", "xx"], ["--epochs", "0"]]
    bad += [["--epochs", "100000"], ["--seeds", "1000"], ["--limit", "0"], ["--device", "tpu9"]]
    return poisoned(valid, bad)


def command(name: str, clip: str, data: str) -> st.SearchStrategy[tuple[str, list[str]]]:
    """(program, arguments) of one of :data:`COMMANDS`."""
    if name == "bla-finetune":
        return finetune_argv(clip, data).map(lambda a: ("bla-finetune", a))
    if name == "run":
        return run_argv(clip, data).map(lambda a: ("bla-eval", a))
    strategies = {
        "analyze": lambda: analyze_argv(data),
        "compare": compare_argv,
        "export": export_argv,
        "learning-report": report_argv,
        "reproduce": reproduce_argv,
    }
    return strategies[name]().map(lambda a: ("bla-eval", a))


COMMANDS = ("run", "analyze", "compare", "export", "learning-report", "reproduce", "bla-finetune")
"""``bla-eval`` runs, its subcommands, and ``bla-finetune``: each fuzzed on its own."""


def invoke(program: str, argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of the entry point in this process; any other exception fails."""
    main = bla_finetune if program == "bla-finetune" else bla_eval
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = int(stop.code or 0) if not isinstance(stop.code, str) else 2
    return code, err.getvalue()


def written_run(program: str, argv: list[str], sandbox: Path) -> Path | None:
    """The run folder a ``bla-eval`` run was asked to write (it may change its own files)."""
    if program != "bla-eval" or "--output" not in argv or argv[0] in ("analyze", "compare"):
        return None
    return (sandbox / argv[argv.index("--output") + 1]).resolve()


def check_run_folders(sandbox: Path) -> None:
    """Every run folder of ours whose results.json exists agrees with its scores."""
    for results in sandbox.rglob(RESULTS_FILE):
        folder = results.parent
        if folder.is_symlink() or not RunFolder(folder).is_run_folder():
            continue
        RunFolder.open(folder)  # raises naming the disagreement


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
@pytest.mark.parametrize("name", COMMANDS)
def test_no_command_line_breaks_a_promise(
    name, data, finished, tiny_clip, built_dataset, fuzz_root, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    program, argv = data.draw(command(name, str(tiny_clip), str(built_dataset)), label="argv")
    sandbox = Path(tempfile.mkdtemp(dir=fuzz_root))
    make_sandbox(sandbox, finished)
    user = {name: files(sandbox / name) for name in USER}
    ours = {name: files(sandbox / name) for name in finished}
    previous = Path.cwd()
    os.chdir(sandbox)
    try:
        code, err = invoke(program, argv)
    finally:
        os.chdir(previous)
    event(f"exit {code}")
    assert "Traceback" not in err, err
    allowed = {0, 1, 2} if argv[0] == "reproduce" else {0, 2}
    assert code in allowed, (code, err)
    if code == 2:
        errors = [line for line in err.strip().splitlines() if ": error: " in line]
        assert len(errors) == 1 and err.strip().endswith(errors[0]), err
    for name, before in user.items():  # a new folder inside the user's may appear
        assert (sandbox / name).exists(), f"{name} removed"
        after = files(sandbox / name)
        assert {k: after.get(k) for k in before} == before, f"{name} changed"
    target = written_run(program, argv, sandbox)
    for name, before in ours.items():
        if target == (sandbox / name).resolve():
            continue  # bla-eval replaces its own run
        after = files(sandbox / name)
        assert {k: after.get(k) for k in before} == before, f"{name} changed"
    check_run_folders(sandbox)
    shutil.rmtree(sandbox, ignore_errors=True)
