"""``python -m bla_eval.performance.main_job`` times the README's main job on a few datapoints and
prints the time, the child's peak memory and the machine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bla_eval.performance.main_job import Machine, main


def test_the_machine_names_its_cpu_and_cores():
    machine = Machine.now()
    assert machine.cpu and machine.cores >= 1
    assert re.fullmatch(r"\d+\.\d / \d+\.\d / \d+\.\d", machine.load_text())


@pytest.mark.slow
def test_times_the_main_job_and_names_the_machine(built_dataset: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    assert main(["--data", str(built_dataset), "--limit", "2", "--output", str(run)]) == 0
    out = capsys.readouterr().out
    assert "running: bla-eval --model smollm2 --output" in out
    assert re.search(r"^wall time: \d+\.\d s \(\d+\.\d min\), exit code 0$", out, re.M)
    peak = re.search(r"^peak RSS: (\d+) MB$", out, re.M)
    assert peak and int(peak.group(1)) > 50  # a child that loaded a model
    assert re.search(rf"^machine: .+, {Machine.now().cores} cores, load ", out, re.M)
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert results["kind"] == "text"
    assert {task["n"] for task in results["tasks"].values()} == {2}
