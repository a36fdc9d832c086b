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
def plan(tiny_clip, built_dataset, valse_repo, tmp_path_factory) -> Path:
    """The plan: the tiny CLIP, a two-layer CLIP and a two-layer SigLIP x BLA (AP) and VALSE
    (existence) x zero-shot and a shuffled-image control."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.testing.dual_encoders import build_clip, build_siglip

    root = tmp_path_factory.mktemp("models")
    texts = sorted({c for p in load_bla(str(built_dataset)) for c in p.captions})
    build_clip(root / "clip2", texts)
    build_siglip(root / "siglip", texts)
    path = root / "plan.yaml"
    path.write_text(
        f"""
models:
  - {{model: {tiny_clip}, name: tiny-clip}}
  - {{model: {root / "clip2"}, name: clip2}}
  - {{model: {root / "siglip"}, name: siglip}}
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
    assert "# Sweep leaderboard: bla, zero-shot" in printed and "| rank low |" in printed
    assert (out / "leaderboards" / "bla--shuffled" / "leaderboard.png").is_file()
    # every reader takes a cell as a run of its own; a rerun finds everything done
    cells = [str(out / "bla" / "zero-shot" / name) for name in ("clip2", "siglip")]
    assert bla_eval(["compare", *cells, "--resamples", "50"]) == 0
    assert sweep(plan, out) == 0
    assert "0 run now, 12 finished before" in capsys.readouterr().out


@pytest.fixture(scope="module")
def ray_instance():
    """One local Ray instance for the module (its start-up takes seconds)."""
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
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
