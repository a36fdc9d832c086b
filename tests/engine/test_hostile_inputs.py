"""Hostile inputs: nothing of the user's is ever touched, results.json never disagrees with
scores.jsonl, every count that scales work has a maximum, and every bad input is one line.

One table per rule and command: the ownership rule (create, or replace only what the same command
wrote) on every command that writes (bla-eval, analyze, compare, export, learning-report,
bla-finetune; the builders in ``tests/builders/test_builders_hostile.py``), the consistency rule
on every reader (analyze, compare, export, learning-report, the Space's results store; on a
resume: ``tests/engine/runs/test_resume.py``), then the bounds and the one-line errors. Runs are
scored by the tiny random CLIP on the built dataset.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from bla_eval.cli import main as bla_eval
from bla_eval.finetune.cli import main as bla_finetune
from bla_eval.outputs import OWNER_FILE
from bla_eval.runs import RESULTS_FILE, SCORES_FILE

from tests.engine.commands import (
    call,
    copy_run,
    eval_args,
    lines_of,
    refused,
    snapshot,
    write_lines,
)

LIMIT = 3


# ----------------------------------------------------------------------------- helpers
@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models on a shared 2-core machine run faster on one thread."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def user_folder(path: Path) -> Path:
    """A folder of the user's own files (a thesis and their own results)."""
    path.mkdir(parents=True)
    (path / "thesis.tex").write_text("\\chapter{Mine}\n", encoding="utf-8")
    (path / "results.json").write_text('{"mine": true}\n', encoding="utf-8")
    (path / "scores.jsonl").write_text('{"task": "x", "id": "1", "scores": [1]}\n')
    return path


@pytest.fixture(scope="module")
def co_run(tiny_clip, built_dataset, tmp_path_factory) -> Path:
    """A finished run: CO, the first 3 datapoints."""
    out = tmp_path_factory.mktemp("co") / "run"
    assert (
        bla_eval(eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", LIMIT)) == 0
    )
    return out


@pytest.fixture(scope="module")
def learning_run(tiny_clip, built_dataset, tmp_path_factory) -> Path:
    """A finished zero-shot run on a learning test split (what learning-report reads)."""
    out = tmp_path_factory.mktemp("learning") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "coordination_learning")
    assert bla_eval([*argv, "--limit", str(LIMIT)]) == 0
    return out


# ----------------------------------------------------------------------------- bla-eval output
def _users_results(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "mine")
    return folder, folder, "is not empty and is not a bla-eval run folder (it holds results.json"


def _another_commands_output(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = tmp_path / "analysis"
    folder.mkdir()
    (folder / "report.md").write_text("# my analysis\n", encoding="utf-8")
    marker = {"command": "bla-eval analyze", "files": ["report.md"]}
    (folder / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    return folder, folder, "holds the output of `bla-eval analyze`"


def _working_directory(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "cwd")
    os.chdir(folder)
    return Path("."), folder, "is the working directory or holds it"


def _symlink(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = user_folder(tmp_path / "real")
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    return tmp_path / "link", folder, "is a symbolic link"


@pytest.mark.parametrize(
    "make",
    [_users_results, _another_commands_output, _working_directory, _symlink],
    ids=["user's own results.json", "another command's output", "working directory", "symlink"],
)
def test_bla_eval_writes_only_into_its_own_run_folders(
    make, tiny_clip, built_dataset, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    output, protected, message = make(tmp_path)
    before = snapshot(protected)
    argv = eval_args(tiny_clip, built_dataset, output, "--tasks", "co", "--limit", "2")
    refused(bla_eval, argv, capsys, message)
    assert snapshot(protected) == before


def test_bla_eval_reruns_into_its_own_folder_and_older_runs_without_marker(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    (run / OWNER_FILE).unlink()  # a run written before the marker existed: its run.json says
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT)
    assert call(bla_eval, argv, capsys)[0] == 0
    assert json.loads((run / OWNER_FILE).read_text())["command"] == "bla-eval"


# ----------------------------------------------------------------------------- readers
def _tampered(run: Path) -> None:
    """One datapoint's scores turned around: results.json no longer follows from the scores."""
    records = lines_of(run / SCORES_FILE)
    first = records[0]
    pairs = list(zip(first["scores"], first["labels"], strict=True))
    right = min(s for s, y in pairs if y) > max(s for s, y in pairs if not y)
    first["scores"] = [float(1 - y if right else y) for y in first["labels"]]
    write_lines(run / SCORES_FILE, records)


def _duplicated(run: Path) -> None:
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "scores": [0.0, 0.0, 1.0, 1.0]}])


def _foreign_task(run: Path) -> None:
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "task": "relative_clause"}])


def _half_written(run: Path) -> None:
    """The last line cut in the middle (a crash, a full disk, a careless copy)."""
    data = (run / SCORES_FILE).read_bytes().rstrip(b"\n")
    last = data.rsplit(b"\n", 1)[-1]
    (run / SCORES_FILE).write_bytes(data[: -(len(last) // 2)])


def _not_utf8(run: Path) -> None:
    with (run / SCORES_FILE).open("ab") as handle:
        handle.write(b'{"task": "coordination", "id": "\xff\xfe"}\n')


CORRUPTIONS = {
    "results.json disagrees with the scores": (_tampered, ["disagrees with", SCORES_FILE]),
    "a repeated id with other scores": (_duplicated, ["line 4", "again (first on line 1)"]),
    "a record of a task the run does not hold": (_foreign_task, ["line 4", "'relative_clause'"]),
    "a half-written last line": (_half_written, ["counts 3 datapoints", "holds 2", SCORES_FILE]),
    "a line that is not UTF-8": (_not_utf8, [SCORES_FILE, "line 4 is not UTF-8"]),
}


def _analyze(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["analyze", run, "--data", data, "--output", tmp_path / "analysis"]


def _compare_a(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["compare", run, clean, "--resamples", "20"]


def _compare_b(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["compare", clean, run, "--resamples", "20"]


def _export(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["export", run, "--output", tmp_path / "export"]


def _learning_report(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["learning-report", run]


READERS = {
    "analyze": _analyze,
    "compare (A)": _compare_a,
    "compare (B)": _compare_b,
    "export": _export,
    "learning-report": _learning_report,
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("reader", list(READERS))
def test_readers_refuse_a_run_whose_results_do_not_follow_from_its_scores(
    reader, corruption, co_run, learning_run, built_dataset, tmp_path, capsys
):
    base = learning_run if reader == "learning-report" else co_run
    edit, fragments = CORRUPTIONS[corruption]
    run, clean = copy_run(base, tmp_path, "bad"), copy_run(base, tmp_path, "clean")
    edit(run)
    main, argv = READERS[reader](run, clean, built_dataset, tmp_path)
    refused(main, argv, capsys, *fragments)
    assert not (tmp_path / "analysis").exists() and not (tmp_path / "export").exists()


def test_the_spaces_results_store_skips_a_run_that_disagrees_with_its_scores(co_run, tmp_path):
    from bla_space import results_store

    copy_run(co_run, tmp_path, "good")
    _tampered(copy_run(co_run, tmp_path, "tampered"))
    _duplicated(copy_run(co_run, tmp_path, "duplicated"))
    assert [r.path.name for r in results_store.list_runs(tmp_path)] == ["good"]


def test_export_labels_the_protocol_the_run_recorded(co_run, tmp_path, capsys):
    """The protocol's name is read with one accessor (``protocol.name``), so an in-context run
    is not labelled zero-shot."""
    run = copy_run(co_run, tmp_path)
    results = json.loads((run / RESULTS_FILE).read_text())
    results["protocol"]["name"] = "icl-sd"  # the name an icl-sd run records
    (run / RESULTS_FILE).write_text(json.dumps(results))
    assert call(bla_eval, ["export", run], capsys)[0] == 0
    text = (run / ".eval_results" / "bla.yaml").read_text()
    assert "protocol icl-sd;" in text and "zero-shot" not in text


# ----------------------------------------------------------------------------- outputs
def _run_being_read(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    return run, run


def _users_folder(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    folder = user_folder(tmp_path / "mine")
    return folder, folder


def _users_file(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    path = tmp_path / "notes.txt"
    path.write_text("my notes\n", encoding="utf-8")
    return path, path


def _cwd(tmp_path: Path, run: Path) -> tuple[Path, Path]:
    folder = user_folder(tmp_path / "cwd")
    os.chdir(folder)
    return Path("."), folder


OUTPUTS = {
    "the run being read": (_run_being_read, ["holds the output of `bla-eval`"]),
    "a folder of the user's": (_users_folder, ["is not empty", "thesis.tex"]),
    "a file of the user's": (_users_file, ["exists and is not a folder"]),
    "the working directory": (_cwd, ["is the working directory or holds it"]),
}
WRITERS = {
    "analyze": lambda run, data, out: ["analyze", run, "--data", data, "--output", out],
    "compare": lambda run, data, out: ["compare", run, run, "--resamples", "20", "--output", out],
    "learning-report": lambda run, data, out: ["learning-report", run, "--output", out],
}


@pytest.mark.parametrize("target", list(OUTPUTS))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_folder_outputs_replace_only_what_the_same_command_wrote(
    writer, target, co_run, learning_run, built_dataset, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    run = copy_run(learning_run if writer == "learning-report" else co_run, tmp_path)
    output, protected = OUTPUTS[target][0](tmp_path, run)
    before, listing = snapshot(protected), sorted(os.listdir(protected.parent))
    refused(bla_eval, WRITERS[writer](run, built_dataset, output), capsys, *OUTPUTS[target][1])
    assert snapshot(protected) == before
    assert sorted(os.listdir(protected.parent)) == listing  # no hidden copy, no staging left


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_folder_output_is_replaced_by_the_command_that_wrote_it(
    writer, co_run, learning_run, built_dataset, tmp_path, capsys
):
    run = copy_run(learning_run if writer == "learning-report" else co_run, tmp_path)
    out = tmp_path / "out"
    argv = WRITERS[writer](run, built_dataset, out)
    assert call(bla_eval, argv, capsys)[0] == 0
    assert call(bla_eval, argv, capsys)[0] == 0  # its own output: replaced
    (out / "mine.txt").write_text("x", encoding="utf-8")  # now it holds a file of the user's
    refused(bla_eval, argv, capsys, "did not write (mine.txt)")


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("eval-results", ".eval_results/bla.yaml"), ("model-index", "model-index.yaml")],
)
def test_export_replaces_only_a_file_it_wrote(fmt, name, co_run, tmp_path, capsys):
    out = tmp_path / "repo"
    (out / name).parent.mkdir(parents=True)
    (out / name).write_text("my: own\n", encoding="utf-8")
    argv = ["export", co_run, "--format", fmt, "--output", out]
    refused(bla_eval, argv, capsys, f"{out / name} exists and was not written by `bla-eval export`")
    assert (out / name).read_text() == "my: own\n"
    (out / name).unlink()
    (out / name).symlink_to(tmp_path / "elsewhere.yaml")
    refused(bla_eval, argv, capsys, "is a symbolic link")
    assert not (tmp_path / "elsewhere.yaml").exists()
    (out / name).unlink()
    assert call(bla_eval, argv, capsys)[0] == 0
    assert call(bla_eval, argv, capsys)[0] == 0  # its own file: replaced


def test_export_dry_run_checks_the_repo_id_as_the_real_call(co_run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    argv = ["export", co_run, "--output", tmp_path / "out", "--push", "--dry-run"]
    refused(bla_eval, [*argv, "--repo-id", "../../etc/passwd"], capsys, "'../../etc/passwd'")
    refused(bla_eval, [*argv, "--repo-id", "org/a/b"], capsys, "'org/a/b'")
    assert not (tmp_path / "out").exists()
    assert call(bla_eval, [*argv, "--repo-id", "org/model"], capsys)[0] == 0


# ----------------------------------------------------------------------------- learning-report
def _results_of(run: Path) -> dict:
    return json.loads((run / RESULTS_FILE).read_text())


def test_learning_report_refuses_runs_that_are_not_learning_runs(
    co_run, learning_run, tmp_path, capsys
):
    refused(bla_eval, ["learning-report", co_run], capsys, "is not a learning run", "'bla'")
    valse = copy_run(learning_run, tmp_path, "valse")
    results = _results_of(valse)
    results["benchmark"] = "valse"  # what a VALSE run's results.json says
    (valse / RESULTS_FILE).write_text(json.dumps(results))
    refused(bla_eval, ["learning-report", valse], capsys, "is not a learning run", "'valse'")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda d: d.pop("task"), "has no str 'task'"),
        (lambda d: d.update(task="xx"), "'xx'"),
        (lambda d: d.update(runs=[]), "has no runs"),
        (lambda d: d["runs"][0].pop("finetuned"), "KeyError 'finetuned'"),
    ],
    ids=["no task", "unknown task", "no runs", "a run without its scores"],
)
def test_learning_report_names_a_finetune_json_it_cannot_read(edit, fragment, tmp_path, capsys):
    folder = tmp_path / "tuned"
    folder.mkdir()
    document = {
        "model": "m",
        "task": "coordination",
        "runs": [{"finetuned": {}}],
        "summary": {"coordination_learning": {"finetuned": {"all": {}}, "zero_shot": {}}},
    }
    edit(document)
    (folder / "finetune.json").write_text(json.dumps(document), encoding="utf-8")
    refused(bla_eval, ["learning-report", folder], capsys, str(folder / "finetune.json"), fragment)


def test_learning_report_names_a_finetune_json_that_is_not_utf8(tmp_path, capsys):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "finetune.json").write_bytes(b'{"task": "\xff"}')
    refused(bla_eval, ["learning-report", tmp_path / "t"], capsys, "finetune.json is not UTF-8")


# ----------------------------------------------------------------------------- bla-finetune
def finetune_args(model: Path, data: Path, out: Path, *extra: object) -> list[str]:
    """A quick bla-finetune: one epoch, 2 validation and test datapoints of CO."""
    argv = ["--model", model, "--task", "co", "--output", out, "--data", data, "--device", "cpu"]
    argv += ["--epochs", "1", "--limit", "2", "--eval-tasks", "co", "--batch-size", "64", *extra]
    return [str(a) for a in argv]


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["", "--overwrite"])
def test_bla_finetune_never_replaces_what_it_did_not_write(
    overwrite, tiny_clip, built_dataset, tmp_path, capsys, monkeypatch
):
    mine = user_folder(tmp_path / "mine")
    before = snapshot(tmp_path)
    argv = finetune_args(tiny_clip, built_dataset, mine, *overwrite)
    refused(bla_finetune, argv, capsys, "thesis.tex")
    monkeypatch.chdir(mine)
    argv = finetune_args(tiny_clip, built_dataset, ".", *overwrite)
    refused(bla_finetune, argv, capsys, "is the working directory or holds it")
    assert snapshot(tmp_path) == before


def test_two_bla_finetune_runs_never_share_an_output(tiny_clip, built_dataset, tmp_path, capsys):
    """A second bla-finetune into the output another one is writing stops at once (its lock
    beside the output names the process), and writes nothing."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = tmp_path / ".tuned.bla-finetune.lock"
        lock.write_text(f"{holder.pid}\n")
        argv = finetune_args(tiny_clip, built_dataset, tmp_path / "tuned")
        refused(bla_finetune, argv, capsys, "in use by another bla-finetune run", str(holder.pid))
        assert sorted(os.listdir(tmp_path)) == [lock.name]
    finally:
        holder.kill()
        holder.wait()


def test_bla_finetune_removes_the_staging_a_killed_run_left_and_writes_its_output(
    tiny_clip, built_dataset, tmp_path, capsys
):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".tuned.bla-staging-{dead.stdout.strip()}"
    (stale / "seed-1").mkdir(parents=True)
    (stale / "seed-1" / "model.safetensors").write_bytes(b"\0" * 1000)
    (tmp_path / ".tuned.bla-finetune.lock").write_text(f"{dead.stdout.strip()}\n")  # stale lock
    code, err = call(
        bla_finetune, finetune_args(tiny_clip, built_dataset, tmp_path / "tuned"), capsys
    )
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == ["tuned"]
    assert json.loads((tmp_path / "tuned" / OWNER_FILE).read_text())["command"] == "bla-finetune"


def test_a_training_row_without_one_true_and_one_false_sentence_is_named(
    tiny_clip, built_dataset, tmp_path, capsys
):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    (data / "data").mkdir(parents=True)
    for name in ("README.md", "manifest.json"):
        shutil.copy(built_dataset / name, data / name)
    shutil.copytree(
        built_dataset / "data" / "coordination_learning", data / "data" / "coordination_learning"
    )
    path = next((data / "data" / "coordination_learning").glob("train-*.parquet"))
    table = pq.read_table(path)
    labels = table.column("labels").to_pylist()
    first = table.column("id")[0].as_py()
    labels[0] = [0, 0]  # two false sentences
    field = table.schema.field("labels")
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("labels"), field, pa.array(labels, field.type)
        ),
        path,
    )
    argv = finetune_args(tiny_clip, data, tmp_path / "out")
    refused(
        bla_finetune, argv, capsys, "coordination_learning/train", f"record {first!r}", "[0, 0]"
    )
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- bounds
RUN = ["--model", "m", "--output", "o"]
TUNE = ["--model", "m", "--task", "co", "--output", "o"]
BOUNDS = {  # (entry point, argv, refusal, what --help says of the flag)
    "bla-eval --limit": (bla_eval, [*RUN, "--limit", "10000000"], "at most 1000000"),
    "bla-eval --batch-size": (bla_eval, [*RUN, "--batch-size", "100000"], "at most 4096"),
    "bla-eval --images-per-batch": (
        bla_eval,
        [*RUN, "--images-per-batch", "100000"],
        "at most 1024",
    ),
    "bla-eval --concurrency": (bla_eval, [*RUN, "--concurrency", "100000"], "at most 64"),
    "bla-eval --max-retries": (bla_eval, [*RUN, "--max-retries", "100000"], "at most 100"),
    "bla-eval --max-answer-tokens": (
        bla_eval,
        [*RUN, "--max-answer-tokens", "10000000"],
        "at most 100000",
    ),
    "bla-eval --top-logprobs": (bla_eval, [*RUN, "--top-logprobs", "1000"], "at most 20"),
    "compare --resamples": (
        bla_eval,
        ["compare", "a", "b", "--resamples", "100000000000000"],
        "at most 100000",
    ),
    "compare --seed": (bla_eval, ["compare", "a", "b", "--seed", "-1"], "0 to 4294967295"),
    "analyze --examples": (bla_eval, ["analyze", "r", "--examples", "1000000000"], "at most 100"),
    "reproduce --resamples": (
        bla_eval,
        ["reproduce", "clip", "--resamples", "100000000000000"],
        "at most 100000",
    ),
    "bla-finetune --seeds": (bla_finetune, [*TUNE, "--seeds", "1000000"], "at most 100"),
    "bla-finetune --epochs": (bla_finetune, [*TUNE, "--epochs", "1000000000"], "at most 1000"),
    "bla-finetune --batch-size": (bla_finetune, [*TUNE, "--batch-size", "100000"], "at most 1024"),
    "bla-finetune --limit": (bla_finetune, [*TUNE, "--limit", "10000000"], "at most 1000000"),
    "bla-finetune --seed": (bla_finetune, [*TUNE, "--seed", "-1"], "4294967295"),
}


@pytest.mark.parametrize("case", list(BOUNDS))
def test_every_count_that_scales_work_has_a_documented_maximum(case, tmp_path, capsys, monkeypatch):
    """Refused at once, in one line, before anything is written; the maximum is in the
    flag's own --help text (docs/ lists the same)."""
    monkeypatch.chdir(tmp_path)
    main, argv, documented = BOUNDS[case]
    start = time.perf_counter()
    refused(main, argv, capsys, argv[-2], f"got {argv[-1]}")
    assert time.perf_counter() - start < 10 and os.listdir(tmp_path) == []
    sub = [argv[0]] if argv[0] in ("compare", "analyze", "reproduce") else []
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*sub, "--help"])
    assert documented in flag_help(capsys.readouterr().out, argv[-2])


def flag_help(text: str, flag: str) -> str:
    """The help entry of ``flag`` in an argparse --help text, on one line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(flag + " "))
    entry = [lines[start]]
    for line in lines[start + 1 :]:
        if line.strip().startswith("-") or not line.startswith(" "):
            break
        entry.append(line)
    return " ".join(" ".join(entry).split())


def test_a_large_allowed_bootstrap_keeps_its_memory_and_time_bounded():
    """100000 resamples (the maximum) of 600 datapoints: the resampled metrics live in
    preallocated arrays and the draws are made a block at a time."""
    import numpy as np

    from bla_metric import significance

    rng = np.random.default_rng(0)
    a, b = rng.random((600, 4)).tolist(), rng.random((600, 4)).tolist()
    labels = [[1, 1, 0, 0]] * 600
    peaks = {}
    for resamples in (10_000, 100_000):
        tracemalloc.start()
        significance.paired_bootstrap(a, b, labels, "ranking", resamples=resamples)
        peaks[resamples] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # 8 bytes per resample and metric (3 metrics, 2 runs): 4.3 MB more for 90000 resamples;
    # per-resample Python lists held about 10 times that
    assert peaks[100_000] - peaks[10_000] < 6e6
    assert peaks[100_000] < 40e6
    with pytest.raises(ValueError, match="at most 100000"):
        significance.paired_bootstrap(a, b, labels, resamples=100_001)


# ----------------------------------------------------------------------------- one-line errors
def test_an_unknown_device_is_one_line(tiny_clip, built_dataset, tmp_path, capsys):
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1")
    refused(bla_eval, [*argv, "--device", "tpu9"], capsys, "unknown --device 'tpu9'")
    argv = finetune_args(tiny_clip, built_dataset, tmp_path / "o")
    refused(bla_finetune, [*argv, "--device", "tpu9"], capsys, "unknown --device 'tpu9'")
    assert os.listdir(tmp_path) == []


def test_a_kind_that_does_not_fit_the_model_is_one_line(tiny_clip, built_dataset, tmp_path, capsys):
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1", "--kind", "itm")
    refused(bla_eval, argv, capsys, "--kind itm does not fit", "kind 'contrastive'")
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--limit", "1", "--kind", "text")
    refused(bla_eval, argv, capsys, "--kind text does not fit")
    assert os.listdir(tmp_path) == []


@pytest.fixture
def tiny_disk(tmp_path):
    """A 16 KiB file system (tmpfs) that fills up; skipped where mounting is not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the unwritable-folder test covers the path)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_one_line_naming_the_path(
    tiny_disk, co_run, tiny_clip, built_dataset, capsys
):
    out = tiny_disk / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", "40")
    refused(bla_eval, argv, capsys, f"{out / SCORES_FILE}: No space left on device")
    assert not (out / RESULTS_FILE).exists()
    shutil.rmtree(out)
    refused(
        bla_eval,
        ["analyze", co_run, "--output", tiny_disk / "analysis"],
        capsys,
        str(tiny_disk),
        "No space left on device",
    )
    assert os.listdir(tiny_disk) == []
    argv = finetune_args(tiny_clip, built_dataset, tiny_disk / "tuned")
    refused(bla_finetune, argv, capsys, str(tiny_disk / "tuned"), "No space left on device")
    assert os.listdir(tiny_disk) == []


def test_an_output_below_a_file_is_one_line_naming_the_path(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    """An OS error other than a full disk (here: a parent that is a file, which no user, root
    included, can write below) is one line naming the path, and the file is untouched."""
    blocker = tmp_path / "a-file"
    blocker.write_text("the user's file\n")
    argv = eval_args(tiny_clip, built_dataset, blocker / "run", "--tasks", "co", "--limit", "1")
    refused(bla_eval, argv, capsys, str(blocker))
    refused(bla_eval, ["analyze", co_run, "--output", blocker / "a"], capsys, str(blocker))
    argv = finetune_args(tiny_clip, built_dataset, blocker / "tuned")
    refused(bla_finetune, argv, capsys, str(blocker))
    assert blocker.read_text() == "the user's file\n"
