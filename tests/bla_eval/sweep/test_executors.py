"""``bla-eval sweep`` end to end: a plan of 3 tiny random-weight models x 2 benchmarks x 2
protocols through each executor (local processes, Ray on a local instance, submitit's local
executor) gives each cell the very ``scores.jsonl`` of a separate ``bla-eval`` run; a worker
killed mid-sweep (kill -9) leaves a sweep the rerun completes with the same results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from bla_eval.cli import main as bla_eval
from bla_eval.runs import SCORES_FILE
from bla_eval.sweep.plan import read_plan

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"
LIMIT = 4


@pytest.fixture(scope="module")
def valse_repo(tmp_path_factory) -> Path:
    """VALSE's dataset repo, built from the real annotations on the release's images."""
    from builders import valse

    out = tmp_path_factory.mktemp("valse") / "repo"
    valse.build_valse(SHARED / "valse", [SHARED / "BLA_Benchmark" / "images"], out)
    return out


@pytest.fixture(scope="module")
def plan(tiny_clip, tiny_model, built_dataset, valse_repo, tmp_path_factory) -> Path:
    """The plan: the tiny CLIP, a two-layer CLIP and a two-layer SigLIP x BLA (AP) and VALSE
    (existence) x zero-shot and a shuffled-image control."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.testing.dual_encoders import build_clip, build_siglip

    root = tmp_path_factory.mktemp("models")
    texts = sorted({c for p in load_bla(str(built_dataset)) for c in p.captions})
    clip2, siglip = tiny_model("clip", texts, build_clip), tiny_model("siglip", texts, build_siglip)
    path = root / "plan.yaml"
    path.write_text(
        f"""
models:
  - {{model: {tiny_clip}, name: tiny-clip}}
  - {{model: {clip2}, name: clip2}}
  - {{model: {siglip}, name: siglip}}
benchmarks:
  - {{benchmark: bla, data: {built_dataset}, tasks: [ap]}}
  - {{benchmark: valse, data: {valse_repo}, tasks: [existence]}}
protocols:
  - zero-shot
  - {{name: shuffled, control: shuffled}}
options: {{limit: {LIMIT}, device: cpu, batch_size: 16}}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def separate(plan, tmp_path_factory) -> dict[str, bytes]:
    """Cell id -> ``scores.jsonl`` of the same run made by ``bla-eval`` on its own."""
    root = tmp_path_factory.mktemp("separate")
    out = {}
    for cell in read_plan(plan).cells:
        argv = ["--output", root / cell.id]
        for key, value in cell.settings.items():
            values = value if isinstance(value, list) else [value]
            argv += ["--" + key.replace("_", "-"), *values]
        assert bla_eval([str(a) for a in argv]) == 0
        out[cell.id] = (root / cell.id / SCORES_FILE).read_bytes()
    return out


def sweep(plan: Path, out: Path, *options: str) -> int:
    """``bla-eval sweep`` in this process, quiet, with a quick leaderboard."""
    argv = ["sweep", str(plan), "--output", str(out), "--quiet", "--resamples", "50", *options]
    return bla_eval(argv)


def scores(out: Path, ids) -> dict[str, bytes]:
    return {i: (out / i / SCORES_FILE).read_bytes() for i in ids}


def test_local_workers_give_the_cells_of_separate_runs_and_the_leaderboards(
    plan, separate, tmp_path, capsys
):
    out = tmp_path / "sweep"
    capsys.readouterr()
    assert sweep(plan, out, "--workers", "2") == 0
    printed = capsys.readouterr().out
    assert scores(out, separate) == separate
    assert "12 cells: 12 run now, 0 finished before, 0 failed" in printed
    assert "# Sweep leaderboard: bla, zero-shot: sentence accuracy" in printed
    assert "| rank low |" in printed and "No leaderboard" not in printed
    assert "# Sweep leaderboard: valse, zero-shot: acc r" in printed  # every benchmark has one
    gain = "image gain of sentence accuracy (real image minus shuffled control)"
    assert f"# Sweep leaderboard: bla, shuffled: {gain}" in printed
    assert "| shuffled control | image gain | gain CI low |" in printed
    assert (out / "leaderboards" / "bla" / "shuffled" / "leaderboard.png").is_file()
    # every reader takes a cell as a run of its own; a rerun finds everything done
    cells = [str(out / "bla" / "zero-shot" / name) for name in ("clip2", "siglip")]
    assert bla_eval(["compare", *cells, "--resamples", "50"]) == 0
    assert sweep(plan, out) == 0
    assert "0 run now, 12 finished before" in capsys.readouterr().out


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance for the module (its start-up takes seconds), of 2 CPUs: two cells
    run at once, each task on one CPU (one thread, as the separate runs)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_tasks_give_the_cells_of_separate_runs(plan, separate, ray_instance, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert sweep(plan, out, "--executor", "ray") == 0, capsys.readouterr().err
    assert scores(out, separate) == separate


def small_plan(plan: Path, folder: Path, models: int) -> tuple[Path, list[str]]:
    """The plan's BLA zero-shot cells of its first ``models`` models: (plan file, cell ids)."""
    doc = yaml.safe_load(plan.read_text(encoding="utf-8"))
    doc.update(
        models=doc["models"][:models],
        benchmarks=doc["benchmarks"][:1],
        protocols=doc["protocols"][:1],
    )
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path, [c.id for c in read_plan(path).cells]


def test_submitit_jobs_give_the_cells_of_separate_runs(plan, separate, tmp_path, capsys):
    """submitit's local executor (a process per job) on two BLA cells of the plan."""
    small, ids = small_plan(plan, tmp_path, 2)
    out = tmp_path / "sweep"
    code = sweep(small, out, "--executor", "slurm", "--cluster", "local")
    assert code == 0, capsys.readouterr().err
    assert scores(out, ids) == {i: separate[i] for i in ids}
    assert (out / ".submitit").is_dir()


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_a_worker_killed_mid_cell_fails_its_cell_and_the_rerun_completes_the_sweep(
    plan, separate, tmp_path, capsys
):
    small, ids = small_plan(plan, tmp_path, 3)
    out = tmp_path / "sweep"
    argv = ["sweep", str(small), "--output", str(out), "--quiet", "--resamples", "50"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    sweep_process = subprocess.Popen(
        [sys.executable, "-m", "bla_eval", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    last = out / ids[-1] / "run.json"  # its cell has started: no new worker is needed
    deadline = time.monotonic() + 240
    while not last.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = [
        p
        for p in _children(sweep_process.pid)
        if "resource_tracker" not in Path(f"/proc/{p}/cmdline").read_text(errors="replace")
    ]
    assert workers, "no worker process"
    os.kill(workers[-1], signal.SIGKILL)
    stdout, stderr = sweep_process.communicate(timeout=300)
    assert sweep_process.returncode == 11, stderr[-2000:]
    assert "failed: its worker process died (exit code -9)" in stderr
    assert "3 cells: 2 run now, 0 finished before, 1 failed" in stdout
    assert bla_eval(argv) == 0
    assert "1 run now, 2 finished before, 0 failed" in capsys.readouterr().out
    assert scores(out, ids) == {i: separate[i] for i in ids}


# ----------------------------------------------------------------------------- kill -9 of the sweep
DRIVER = """
import json, sys
from bla_eval.sweep.job import Job
from bla_eval.sweep.local_executor import run_local
from bla_eval.sweep.progress import Events

job = Job(**json.loads(sys.argv[1]))
run_local([job], Events(1, show=False), 1)
"""


def test_a_sweep_killed_with_kill_9_takes_its_workers_with_it(built_dataset, tmp_path):
    """The probe: ``kill -9`` of the sweep while its worker is inside a cell (waiting on an
    endpoint that never answers): the worker ends at once instead of finishing the cell."""
    import json
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(180)
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    settings = {"model": "m", "endpoint": url, "data": str(built_dataset), "tasks": ["ap"]}
    settings |= {"limit": 1, "api_key_env": "BLA_TEST_KEY", "max_retries": 0}
    settings |= {"request_timeout": 120.0}
    job = {"id": "bla/zero-shot/m", "output_dir": str(tmp_path / "cell")}
    job |= {"settings": settings, "resume": False}
    env = {**os.environ, "BLA_TEST_KEY": "sk-test-0000000000000000", "OMP_NUM_THREADS": "1"}
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, json.dumps(job)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        connection, _ = server.accept()  # the worker is inside the cell, waiting for an answer
        workers = [
            p
            for p in _children(driver.pid)
            if "resource_tracker" not in Path(f"/proc/{p}/cmdline").read_text(errors="replace")
        ]
        assert len(workers) == 1, workers
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(workers[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(workers[0]), "the worker outlived the sweep"
        connection.close()
    finally:
        driver.kill()
        driver.wait()
        server.close()


def _alive(pid: int) -> bool:
    """A process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_rerun_never_starts_a_cell_that_a_live_process_holds(tmp_path, capsys, monkeypatch):
    """A cell whose run folder's lock a live process holds (a worker of a killed sweep that
    still runs it) is reported, not started; its folder is left as it is."""
    from bla_eval.runs import RunFolder
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.plan import parse_plan
    from huggingface_hub import constants

    from tests.bla_eval.commands import snapshot

    cache = tmp_path / "hub"  # the plan's Hub id as the local Hub cache holds it: found offline
    (cache / "models--org--clip-a" / "snapshots" / ("0" * 40)).mkdir(parents=True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))

    text = "models: [{model: org/clip-a, kind: clip}]\nbenchmarks: [bla]\n"
    plan, out = tmp_path / "plan.yaml", tmp_path / "sweep"
    plan.write_text(text, encoding="utf-8")
    (cell,) = parse_plan(text).cells
    SweepFolder(out).record(parse_plan(text))
    (out / cell.id).mkdir(parents=True)
    with RunFolder(out / cell.id).lock():
        before = snapshot(out / cell.id)
        capsys.readouterr()
        assert sweep(plan, out) == 11
        err = capsys.readouterr().err
        assert f"bla-eval sweep: cell {cell.id} failed: not started: output folder" in err
        assert f"is in use by another bla-eval run (process {os.getpid()})" in err
        assert snapshot(out / cell.id) == before
