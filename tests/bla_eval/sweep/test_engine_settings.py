"""The engines' settings a sweep derives: a Ray address where nothing listens is one line with
exit 2 (Ray itself would retry for minutes), Slurm's warning margin follows ``--time``, and a
failed cell's line keeps the beginning and the end of the engine's message; a node that
does not see the sweep folder fails its cell in one line."""

from __future__ import annotations

import os

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.sweep.progress import clipped
from bla_eval.sweep.slurm_executor import signal_margin


def test_a_ray_address_where_nothing_listens_is_one_line(tmp_path, free_port, capsys):
    pytest.importorskip("ray")
    plan = tmp_path / "plan.yaml"
    (tmp_path / "model").mkdir()  # found, as every cell's model is before the sweep starts
    plan.write_text(
        f"models: [{{model: {tmp_path / 'model'}, kind: text}}]\nbenchmarks: [bla]\n"
        "protocols: [zero-shot]\n"
    )
    address = f"127.0.0.1:{free_port()}"
    argv = ["sweep", str(plan), "--output", str(tmp_path / "out"), "--executor", "ray"]
    assert bla_eval([*argv, "--address", address, "--quiet"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"bla-eval sweep: error: the Ray cluster at {address} did not answer")


@pytest.mark.parametrize(("minutes", "seconds"), [(1, 6), (2, 12), (10, 60), (15, 90), (600, 90)])
def test_the_slurm_warning_margin_is_a_tenth_of_the_time_limit(minutes, seconds):
    assert signal_margin(minutes) == seconds


def test_a_long_engine_message_keeps_its_state_and_its_end():
    message = "Job 12_0 CANCELLED at 10:00 " + "x" * 1000 + " KeyError: 'scores'"
    line = clipped(message)
    assert len(line) <= 300
    assert "CANCELLED" in line and line.endswith("KeyError: 'scores'")


def test_a_node_that_does_not_see_the_sweep_folder_fails_the_cell_writing_nothing(tmp_path):
    """A worker whose file system lacks the driver's sweep folder (no marker listing the cell
    there) fails the cell in one line naming its host and the path, and creates nothing."""
    from bla_eval.sweep.job import Job, run_job

    root = tmp_path / "sweep"
    job = Job("bla/zero-shot/m", str(root / "bla/zero-shot/m"), {"model": "m"}, False, 1, str(root))
    outcome = run_job(job)
    host = os.uname().nodename
    assert outcome.error.startswith(f"host {host} does not see the sweep folder {root} ")
    assert "\n" not in outcome.error
    assert not root.exists()
