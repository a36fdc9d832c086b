"""Runner records are checked before any value of theirs reaches a command: a Slurm job id is
digits (a forged ``--user=root`` never reaches ``scancel``), a pid is bounded, a record that is
a symbolic link, a FIFO or no JSON object is refused in one line naming it, at once."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.sweep.runners import live_runners, read_record, record_path, write_record
from bla_eval.sweep.slurm_queue import cancel

from tests.bla_eval.commands import refused

CELL = "bla--zero-shot--tiny"


def _record(sweep: Path, text: str) -> Path:
    path = record_path(sweep, CELL)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"cell": "c", "slurm_job": "--user=root"}', "holds slurm_job '--user=root'"),
        ('{"cell": "c", "slurm_job": "12;rm"}', "holds slurm_job '12;rm'"),
        ('{"cell": "c", "slurm_job": 12}', "holds slurm_job '12'"),
        ('{"cell": "c", "pid": ' + str(10**30) + ', "host": "h"}', "an integer of 31 digits"),
        ('{"cell": "c", "pid": 4294967296, "host": "h"}', "holds pid '4294967296'"),
        ('{"cell": "c", "pid": -1, "host": "h"}', "holds pid '-1'"),
        ('{"cell": "c", "pid": true, "host": "h"}', "holds pid 'True'"),
        ('{"cell": "c", "ray_task": "-x"}', "holds ray_task '-x'"),
        ('["not", "an", "object"]', "is not a JSON object"),
        ("[" * 10_000, "is not valid JSON"),
        ("{" * 100_000, "is over 65536 bytes"),
    ],
)
def test_a_forged_record_is_refused_naming_it(tmp_path: Path, text: str, named: str):
    path = _record(tmp_path, text)
    with pytest.raises(ValueError, match="the runner record .* remove it if no job runs") as err:
        live_runners(tmp_path, [CELL], queue={"12"})
    assert str(path) in str(err.value) and named in str(err.value)
    assert "\n" not in str(err.value)


def test_a_valid_record_reads_back(tmp_path: Path):
    write_record(tmp_path, CELL, slurm_job="12_3", pid=os.getpid(), host=os.uname().nodename)
    record = read_record(record_path(tmp_path, CELL))
    assert record is not None and record["slurm_job"] == "12_3"
    assert live_runners(tmp_path, [CELL], queue={"12_3"}) == {CELL: record}
    assert live_runners(tmp_path, [CELL], queue=set()) == {}


def test_a_record_that_is_a_link_is_refused(tmp_path: Path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"cell": CELL, "slurm_job": "12"}), encoding="utf-8")
    path = record_path(tmp_path, CELL)
    path.parent.mkdir()
    path.symlink_to(elsewhere)
    with pytest.raises(ValueError, match="is a symbolic link") as err:
        live_runners(tmp_path, [CELL], queue={"12"})
    assert str(path) in str(err.value)


def test_a_record_that_is_a_fifo_is_refused_at_once(tmp_path: Path):
    path = record_path(tmp_path, CELL)
    path.parent.mkdir()
    os.mkfifo(path)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_record(path)
        except ValueError as err:
            outcome.append(err)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "reading a FIFO record waits for a writer"
    assert outcome and "is a FIFO, not a regular file" in str(outcome[0])


def test_cancel_refuses_an_id_that_is_no_job_id():
    with pytest.raises(ValueError, match="'--user=root' is no Slurm job id"):
        cancel(["12", "--user=root"])


def test_a_sweep_with_a_forged_record_stops_before_scancel(
    tiny_clip, built_dataset, tmp_path: Path, capsys
):
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.plan import parse_plan

    text = (
        f"models: [{{model: {tiny_clip}, name: tiny}}]\n"
        f"benchmarks: [{{benchmark: bla, data: {built_dataset}, tasks: [ap]}}]\n"
        "options: {limit: 2, device: cpu}\n"
    )
    plan, out = tmp_path / "plan.yaml", tmp_path / "sweep"
    plan.write_text(text, encoding="utf-8")
    (cell,) = parse_plan(text).cells
    SweepFolder(out).record(parse_plan(text))  # an earlier sweep, whose job record is forged
    path = record_path(out, cell.id)
    path.parent.mkdir()
    path.write_text(json.dumps({"cell": cell.id, "slurm_job": "--user=root"}), encoding="utf-8")
    argv = ["sweep", plan, "--output", out, "--quiet", "--cancel-running"]
    line = refused(bla_eval, argv, capsys, str(path), "'--user=root'")
    assert "no slurm job" in line
    assert not (out / cell.id).exists()  # the cell never started


def test_a_worker_whose_record_became_a_link_fails_its_cell_naming_it(tmp_path: Path):
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.job import Job, run_job
    from bla_eval.sweep.plan import parse_plan

    plan = parse_plan("models: [{model: org/clip-a, kind: clip}]\nbenchmarks: [bla]\n")
    (cell,) = plan.cells
    SweepFolder(tmp_path).record(plan)
    path = record_path(tmp_path, cell.id)
    path.parent.mkdir()
    path.symlink_to(tmp_path / "elsewhere.json")
    job = Job(cell.id, str(tmp_path / cell.id), cell.settings, False, 1, str(tmp_path))
    outcome = run_job(job)
    assert outcome.error is not None and f"{path} is a symbolic link" in outcome.error
    assert not (tmp_path / "elsewhere.json").exists()
