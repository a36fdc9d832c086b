"""A submission that ``sbatch`` refuses (here: an empty Slurm configuration, so the real
``sbatch`` fails at once; or no ``sbatch`` at all) ends the sweep with one line naming the
command and what it said, exit 2, and no cell started."""

from __future__ import annotations

from pathlib import Path

from bla_eval.cli import main as bla_eval

from tests.bla_eval.commands import refused


def test_a_failing_sbatch_is_one_line_naming_it(
    tiny_clip, built_dataset, tmp_path: Path, capsys, monkeypatch
):
    (tmp_path / "slurm.conf").write_text("", encoding="ascii")
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "slurm.conf"))
    plan, out = tmp_path / "plan.yaml", tmp_path / "sweep"
    plan.write_text(
        f"models: [{{model: {tiny_clip}, name: tiny}}]\n"
        f"benchmarks: [{{benchmark: bla, data: {built_dataset}, tasks: [ap]}}]\n"
        "options: {limit: 2, device: cpu}\n",
        encoding="utf-8",
    )
    argv = ["sweep", plan, "--output", out, "--quiet", "--executor", "slurm"]
    line = refused(bla_eval, argv, capsys, "sbatch could not submit the 1 cell(s) of the sweep")
    assert "FailedJobError" not in line and "Traceback" not in line
    assert not [p for p in out.iterdir() if p.name.startswith("bla--")]
