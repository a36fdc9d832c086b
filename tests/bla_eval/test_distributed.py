"""Runs across processes: ``torchrun`` with two CPU processes (gloo) gives the files of one process,
and a killed two-process run resumes (per part) to the same result.

Byte-identical ``scores.jsonl`` holds between runs with the same numeric settings only: the same
batches and the same number of CPU threads per process (a float32 sum over more threads may round
differently, e.g. with AVX-512 kernels). Both sides therefore run as child processes with one
thread each (``OMP_NUM_THREADS=1``, as ``torchrun`` gives its workers by default).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
from bla_eval.distributed import Processes, single_process_order
from bla_eval.items import ImageRef, Item
from bla_eval.runs import SCORES_FILE, RunFolder

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The numeric settings of every process of these runs (one CPU thread each)."""


def bla_eval_process(argv: list[str], processes: int = 1) -> subprocess.Popen:
    """``python -m bla_eval ...`` (one process) or ``torchrun --standalone --nproc-per-node N -m
    bla_eval ...``, one CPU thread per process, in a process group of its own."""
    launcher = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes)]
    command = [sys.executable, *(launcher if processes > 1 else []), "-m", "bla_eval", *argv]
    return subprocess.Popen(
        command,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **ONE_THREAD},
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def finish(proc: subprocess.Popen) -> None:
    """Wait for ``proc`` (5 minutes at most); it must exit 0 (else its log's end is shown)."""
    log = proc.communicate(timeout=300)[0].decode(errors="replace")
    assert proc.returncode == 0, log[-3000:]


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the launcher and the workers it started (they run in sessions of their own), and
    wait until the workers have ended: none is left to write or remove anything (the launcher
    is the caller's to collect)."""
    launcher = psutil.Process(proc.pid)
    workers = launcher.children(recursive=True)
    for child in workers:
        child.kill()
    launcher.kill()
    deadline = time.monotonic() + 60
    while any(map(_running, workers)):
        assert time.monotonic() < deadline, "a worker outlived SIGKILL"
        time.sleep(0.02)


def _running(process: psutil.Process) -> bool:
    """Whether ``process`` has not ended (a zombie, ended but not yet collected, has)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def item(task: str, n: int, *keys: str) -> Item:
    labels = tuple((1, 0) for _ in keys)
    images = tuple(ImageRef(k) for k in keys)
    return Item("bla", task, f"{task}-{n}", images, ("a", "b"), labels)


def test_processes_from_the_launcher_environment():
    assert Processes.from_env({}) == Processes(0, 1, 0)
    procs = Processes.from_env({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"})
    assert (procs.rank, procs.world, procs.local_rank, procs.main) == (3, 4, 1, False)
    assert procs.device("cpu") == "cpu"
    with pytest.raises(ValueError, match="bad process group"):
        Processes.from_env({"RANK": "2", "WORLD_SIZE": "2"})


def test_shards_split_the_images_and_merge_back_in_single_process_order(tmp_path):
    items = [item("ap", 0, "x"), item("co", 0, "y"), item("co", 1, "x"), item("rc", 0, "z")]
    items.append(item("wg", 0, "z", "w"))  # two images: written once both are scored
    shards = [Processes(r, 2, r).shard(items) for r in range(2)]
    assert sorted(id(i) for s in shards for i in s) == sorted(id(i) for i in items)
    assert [i.id for i in shards[0]] == ["ap-0", "co-1", "rc-0", "wg-0"]  # images x, z
    order = single_process_order(items)
    assert [i.id for i in order] == ["ap-0", "co-1", "co-0", "rc-0", "wg-0"]
    folder = RunFolder(tmp_path)
    folder.mark(2)  # the run's marker lists its parts
    for rank, shard in enumerate(shards):
        with folder.part_path(*Processes(rank, 2, rank).part).open("w") as f:
            for it in shard:
                f.write(json.dumps({"task": it.task, "id": it.id, "scores": [0.5, 0.1]}) + "\n")
    assert len(folder.part_files()) == 2
    assert folder.merge_parts([(i.task, i.id) for i in order]) == 5
    lines = (tmp_path / SCORES_FILE).read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == [i.id for i in order]
    assert folder.part_files() == []
    # a resume folds parts left by a killed run into scores.jsonl, first record of an item wins
    folder.mark(3)
    (tmp_path / "scores.part-0-of-3.jsonl").write_text(lines[0].replace("0.5", "0.9") + "\n")
    new = '{"task": "xx", "id": "new", "scores": [0.5, 0.1]}'
    (tmp_path / "scores.part-2-of-3.jsonl").write_text(new + "\n")
    assert folder.fold_parts() == 1
    assert (tmp_path / SCORES_FILE).read_text().splitlines() == [*lines, new]


@pytest.mark.slow
def test_two_processes_equal_one_and_a_killed_run_resumes(tiny_clip, built_dataset, tmp_path):
    argv = ["--model", str(tiny_clip), "--data", str(built_dataset), "--device", "cpu"]
    argv += ["--limit", "40", "--batch-size", "1", "--images-per-batch", "1"]  # same batches
    one, two = tmp_path / "one", tmp_path / "two"
    single = bla_eval_process([*argv, "--output", str(one)])  # one process, one thread
    double = bla_eval_process([*argv, "--output", str(two)], processes=2)  # at once
    finish(single)
    finish(double)
    whole = json.loads((one / "results.json").read_text(encoding="utf-8"))
    assert (two / SCORES_FILE).read_bytes() == (one / SCORES_FILE).read_bytes()
    results = json.loads((two / "results.json").read_text(encoding="utf-8"))
    assert results["tasks"] == whole["tasks"]
    assert RunFolder(two).part_files() == []

    killed = tmp_path / "killed"
    proc = bla_eval_process([*argv, "--output", str(killed)], processes=2)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        lines = sum(p.read_bytes().count(b"\n") for p in RunFolder(killed).part_files())
        if lines >= 10:
            kill_tree(proc)
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (killed / "results.json").exists()
    assert len(RunFolder(killed).part_files()) == 2

    finish(bla_eval_process([*argv, "--output", str(killed), "--resume"], processes=2))
    resumed = json.loads((killed / "results.json").read_text(encoding="utf-8"))
    assert resumed["tasks"] == whole["tasks"]
    assert resumed["timings"]["datapoints_resumed"] >= 10
    assert (killed / SCORES_FILE).read_bytes() == (one / SCORES_FILE).read_bytes()


@pytest.mark.slow
def test_two_real_processes_refuse_a_linked_part_and_change_nothing(
    co_run, tiny_clip, built_dataset, tmp_path
):
    """``torchrun`` with two processes resuming into a run folder whose part of process 1 points
    at a file of the user's: each process refuses with one line before anything is written
    (unless ``torchrun`` stopped it first: it ends the others once one process fails), and
    nothing under the folder or the user's file changes."""
    from tests.bla_eval.commands import only_own_changes, tree_hashes

    argv = ["--model", str(tiny_clip), "--data", str(built_dataset), "--device", "cpu"]
    argv += ["--tasks", "co", "--limit", "3"]
    run = tmp_path / "run"
    shutil.copytree(co_run, run)  # a finished run of the same settings
    user = tmp_path / "mine.jsonl"
    user.write_bytes((run / SCORES_FILE).read_bytes())
    (run / "scores.part-1-of-2.jsonl").symlink_to(user)
    before = tree_hashes(tmp_path)
    proc = bla_eval_process([*argv, "--output", str(run), "--resume"], processes=2)
    log = proc.communicate(timeout=300)[0].decode(errors="replace")
    assert proc.returncode != 0, log[-3000:]
    refusals = [line for line in log.splitlines() if line.startswith("bla-eval: error: ")]
    stopped = [line for line in log.splitlines() if "closing signal SIGTERM" in line]
    assert 1 <= len(refusals) <= 2 <= len(refusals) + len(stopped), log[-3000:]  # each process
    assert all(
        line.endswith(
            "scores.part-1-of-2.jsonl is a symbolic link: no output is written "
            "through one; remove it"
        )
        for line in refusals
    ), refusals
    only_own_changes(before, tree_hashes(tmp_path))


@pytest.mark.slow
def test_a_refusal_of_the_main_process_stops_every_process(tiny_clip, built_dataset, tmp_path):
    """A part file the run's marker does not list: the main process refuses in one line and
    the other process stops too (it does not wait for the main process at a barrier)."""
    out = tmp_path / "run"
    out.mkdir()
    RunFolder(out).mark()  # a run folder of one process: it lists no part
    foreign = out / "scores.part-0-of-2.jsonl"
    foreign.write_text('{"task": "active_passive", "id": "ap-1", "scores": [1, 0]}\n')
    before = foreign.read_bytes()
    argv = ["--model", str(tiny_clip), "--data", str(built_dataset), "--device", "cpu"]
    proc = bla_eval_process([*argv, "--limit", "2", "--output", str(out)], processes=2)
    log = proc.communicate(timeout=240)[0].decode(errors="replace")
    assert proc.returncode != 0
    assert "scores.part-0-of-2.jsonl is not a part of the run" in log, log[-3000:]
    assert "the main process (rank 0) refused the run" in log, log[-3000:]
    errors = [line for line in log.splitlines() if line.startswith("bla-eval: error: ")]
    assert len(errors) == 2 and "bla_eval/" not in log, log[-3000:]  # (torchrun's own traceback)
    assert foreign.read_bytes() == before
    assert sorted(os.listdir(out)) == [".bla-output.json", foreign.name]
