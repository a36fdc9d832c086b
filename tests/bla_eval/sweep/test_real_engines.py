"""Sweeps on real engines (``conftest``: a single-node Slurm without accounting, a two-node Ray
cluster), with their faults: a worker killed with ``kill -9``, a lost Ray node, ``scancel``, a
driver killed and rerun. After each fault the rerun ends the sweep with every cell's
``scores.jsonl`` byte for byte that of a separate uninterrupted ``bla-eval`` run, and no cell
ever has two writers (a rerun while earlier jobs run is refused, or cancels them)."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RESULTS_FILE, SCORES_FILE
from bla_eval.sweep.plan import read_plan
from bla_eval.sweep.runners import RUNNERS, read_record, record_path

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]
LIMIT = 150


@pytest.fixture(scope="module")
def plan(tiny_clip, built_dataset, tmp_path_factory) -> Path:
    """Two cells long enough to be interrupted while they score (seconds): the tiny CLIP on
    BLA's AP and CO, one image and one sentence at a time, zero-shot and with a shuffled
    control."""
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text(
        f"""
models: [{{model: {tiny_clip}, name: tiny-clip}}]
benchmarks: [{{benchmark: bla, data: {built_dataset}, tasks: [ap, co]}}]
protocols: [zero-shot, {{name: shuffled, control: shuffled}}]
options: {{device: cpu, batch_size: 1, images_per_batch: 1, limit: {LIMIT}}}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def expected(plan, tmp_path_factory) -> Iterator[dict[str, bytes]]:
    """Cell id -> ``scores.jsonl`` of the same run made by ``bla-eval`` alone, uninterrupted."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("TQDM_DISABLE", "1")
    root = tmp_path_factory.mktemp("separate")
    out = {}
    for cell in read_plan(plan).cells:
        config = cell.config(root, False)
        argv = ["--output", str(config.output_dir)]
        for key, value in cell.settings.items():
            values = value if isinstance(value, list) else [value]
            argv += ["--" + key.replace("_", "-"), *map(str, values)]
        assert bla_eval(argv) == 0
        out[cell.id] = (root / cell.id / SCORES_FILE).read_bytes()
    monkeypatch.undo()
    yield out


def start(plan: Path, out: str, cwd: Path, env: dict[str, str], *options: str):
    argv = [sys.executable, "-m", "bla_eval", "sweep", str(plan), "--output", out, "--quiet"]
    argv += ["--resamples", "20", *options]
    env = {**env, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process, seconds: float = 400) -> tuple[int, str, str]:
    stdout, stderr = process.communicate(timeout=seconds)
    return process.returncode, stdout, stderr


def scoring(root: Path, cells: list[str], seconds: float = 300) -> tuple[str, dict]:
    """Wait until a cell has scored one more datapoint than it had and is not finished; the
    cell and its runner record."""
    before = {c: _lines(root / c) for c in cells}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for cell in cells:
            record = read_record(record_path(root, cell))
            if record is None or "pid" not in record or (root / cell / RESULTS_FILE).exists():
                continue
            if _lines(root / cell) > before[cell]:
                return cell, record
        time.sleep(0.01)
    raise TimeoutError("no cell scored")


PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000  # <sys/ptrace.h>, <sys/wait.h>


def _ptrace(request: int, pid: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.ptrace(request, pid, None, None) == 0


def hold(pid: int) -> bool:
    """Hold process ``pid``'s main thread in a ptrace stop, which (unlike SIGSTOP) Slurm's
    cancel cannot resume: its SIGCONT and SIGTERM wait there, so a held job writes nothing more
    before the SIGKILL that comes KillWait later (:func:`killed` collects its end). False when
    the process has ended."""
    if not _ptrace(PTRACE_ATTACH, pid):
        return False
    os.waitpid(pid, WALL)  # the attach's stop
    return True


def held(root: Path, cells: list[str]) -> tuple[str, dict]:
    """A cell caught while it scores and held there (:func:`hold`), unfinished: the cell and
    its runner record."""
    while True:
        cell, record = scoring(root, cells)
        if not hold(record["pid"]):
            continue  # it ended before it was caught: another one
        if not (root / cell / RESULTS_FILE).exists():
            return cell, record
        _ptrace(PTRACE_DETACH, record["pid"])  # it finished before it stopped: another one


def end_held(pid: int) -> None:
    """Kill the held process ``pid`` if it is still there and collect its end."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    killed(pid, seconds=30)


def killed(pid: int, seconds: float = 120) -> bool:
    """Whether the held process ``pid`` is killed by SIGKILL within ``seconds`` (its end
    collected, so that its parent sees it end)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, WALL | os.WNOHANG)
        if done and os.WIFSIGNALED(status):
            return os.WTERMSIG(status) == signal.SIGKILL
        if done and os.WIFEXITED(status):
            return False
        time.sleep(0.05)
    return False


def started(root: Path, cell: str, before: dict, seconds: float = 300) -> dict:
    """Wait until the cell's runner record names a process other than ``before``'s."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        record = read_record(record_path(root, cell))
        if record is not None and record.get("pid") not in (None, before.get("pid")):
            return record
        time.sleep(0.05)
    raise TimeoutError(f"cell {cell} did not start")


def _lines(cell: Path) -> int:
    try:
        return (cell / SCORES_FILE).read_bytes().count(b"\n")
    except OSError:
        return 0


def check_cells(root: Path, expected: dict[str, bytes]) -> None:
    for cell, scores in expected.items():
        assert (root / cell / SCORES_FILE).read_bytes() == scores, cell
    assert not list((root / RUNNERS).glob("*.json")), "a runner record outlived its cell"


def test_ray_two_nodes_a_killed_worker_and_a_lost_node(ray_cluster, plan, expected, tmp_path):
    """A relative ``--output`` is the driver's; ``kill -9`` of a task's worker, then the loss of
    the node running the resumed cell, each fail that cell in one line; the sweep on a new node
    ends byte-identical."""
    cells = list(expected)
    ray = ["--executor", "ray", "--address", ray_cluster.address]
    sweep = start(plan, "out", tmp_path, ray_cluster.env, *ray)  # relative to the driver
    root = tmp_path / "out"
    cell, record = scoring(root, cells)
    os.kill(record["pid"], signal.SIGKILL)
    code, out, err = finish(sweep)
    assert code == 11, err[-3000:]
    assert f"cell {cell} failed: its Ray task failed:" in err
    assert "2 cells: 1 run now, 0 finished before, 1 failed" in out
    # the lost node: its raylet killed while the resumed cell scores on it
    node = ray_cluster.add_node() if not ray_cluster.nodes else f"{ray_cluster.root}/node1"
    sweep = start(plan, "out", tmp_path, ray_cluster.env, *ray)
    _, record = held(root, [cell])  # held, so it cannot finish and answer before the node is lost
    for raylet in ray_cluster.raylet_of(node):
        os.kill(raylet, signal.SIGKILL)
    code, out, err = finish(sweep)
    end_held(record["pid"])
    assert code == 11, err[-3000:]
    assert f"cell {cell} failed: its Ray task failed:" in err
    ray_cluster.add_node()
    code, out, err = finish(start(plan, "out", tmp_path, ray_cluster.env, *ray))
    assert code == 0, err[-3000:]
    assert "2 cells: 1 run now, 1 finished before, 0 failed" in out
    check_cells(root, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing written elsewhere


def test_slurm_without_accounting_scancel_and_a_killed_driver(
    slurm_cluster, plan, expected, tmp_path
):
    """``scancel`` of a running job fails its cell with the job's state; a driver killed with
    ``kill -9`` leaves its jobs running: the rerun refuses to start a second writer, naming
    them, and ``--cancel-running`` cancels them and ends the sweep byte-identical."""
    env = {**os.environ, **slurm_cluster}
    cells = list(expected)
    root = tmp_path / "sweep"
    slurm = ["--executor", "slurm", "--time", "10"]
    sweep = start(plan, str(root), tmp_path, env, *slurm)
    cell, record = held(root, cells)
    subprocess.run(["scancel", record["slurm_job"]], env=env, check=True)
    assert killed(record["pid"]), "the cancelled job's process was not killed"
    code, out, err = finish(sweep)
    assert code == 11, err[-3000:]
    line = next(x for x in err.splitlines() if f"cell {cell} failed" in x)
    assert f"its Slurm job {record['slurm_job']} ended CANCELLED" in line, line
    # a killed driver: its job goes on (held, so it is still running for the reruns), the
    # rerun does not start a second one
    sweep = start(plan, str(root), tmp_path, env, *slurm)
    record = started(root, cell, record)
    assert hold(record["pid"])
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    code, out, err = finish(start(plan, str(root), tmp_path, env, *slurm))
    assert code == 2, err[-3000:]
    (line,) = err.strip().splitlines()
    assert f"{cell} (Slurm job {record['slurm_job']}" in line and "--cancel-running" in line
    sweep = start(plan, str(root), tmp_path, env, *slurm, "--cancel-running")
    assert killed(record["pid"]), "the running job was not cancelled"
    code, out, err = finish(sweep)
    assert code == 0, err[-3000:]
    check_cells(root, expected)
    sacct = subprocess.run(["sacct"], env=env, capture_output=True, text=True)
    assert sacct.returncode != 0  # the path without accounting was the one taken


def test_slurm_a_silent_cell_is_cancelled_and_fails(slurm_cluster, plan, expected, tmp_path):
    """A job that stops (SIGSTOP: no heartbeat) past ``--max-silence`` is cancelled; the sweep
    ends with its line."""
    env = {**os.environ, **slurm_cluster}
    root = tmp_path / "sweep"
    sweep = start(plan, str(root), tmp_path, env, "--executor", "slurm", "--max-silence", "10")
    cell, record = scoring(root, list(expected))
    os.kill(record["pid"], signal.SIGSTOP)
    code, out, err = finish(sweep)
    assert code in (11, 12), err[-3000:]
    assert f"cell {cell} failed: its Slurm job {record['slurm_job']} was silent for" in err
    queue = subprocess.run(
        ["squeue", "-h", "-j", record["slurm_job"], "-o", "%T"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert queue.stdout.strip() in ("", "COMPLETING", "CANCELLED")  # cancelled: it ends
    assert json.loads((root / "sweep.json").read_text())["cells"]
