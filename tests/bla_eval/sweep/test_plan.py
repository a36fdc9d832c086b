"""``bla-eval sweep``'s plan and folder checks: one error line naming the bad key or entry,
before any cell runs (no model is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.sweep.folder import SweepFolder
from bla_eval.sweep.plan import PlanError, parse_plan

from tests.bla_eval.commands import refused, user_folder
from tests.bla_eval.test_extras import run_without

PLAN = """
models:
  - {model: org/clip-a, kind: clip}
  - {model: org/clip-b, name: b, batch_size: 8}
benchmarks:
  - {benchmark: bla, tasks: [ap, co]}
  - valse
protocols:
  - zero-shot
  - {name: shuffled, control: shuffled}
options: {limit: 4, device: cpu}
"""


def test_a_plan_expands_into_cells_with_the_later_settings_winning() -> None:
    plan = parse_plan(PLAN)
    assert [c.id for c in plan.cells][:3] == [
        "bla/zero-shot/clip-a",
        "bla/zero-shot/b",
        "bla/shuffled/clip-a",
    ]
    assert len(plan.cells) == 8
    cell = plan.cells[3]
    assert cell.settings == {
        "limit": 4,
        "device": "cpu",
        "benchmark": "bla",
        "tasks": ["ap", "co"],
        "control": "shuffled",
        "model": "org/clip-b",
        "batch_size": 8,
        "name": "b",
    }
    assert "batch_size" not in cell.recorded() and cell.recorded()["limit"] == 4
    assert cell.config(Path("/sweep"), True).output_dir == Path("/sweep/bla/shuffled/b")
    only = parse_plan(PLAN.replace("name: b,", "name: b, protocols: [shuffled],"))
    assert [c.id for c in only.cells if c.model == "b"] == ["bla/shuffled/b", "valse/shuffled/b"]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (("limit: 4", "limt: 4"), "plan: options.limt: unknown key 'limt'"),
        (("limit: 4", "limit: many"), "plan: options.limit has the wrong type"),
        (("limit: 4", "limit: 0"), "cell bla/zero-shot/clip-a: limit must be at least 1"),
        (("tasks: [ap, co]", "tasks: [ap, xx]"), "cell bla/zero-shot/clip-a:"),
        (("{model: org/clip-a, kind: clip}", "{kind: clip}"), "models[0]: the key 'model' is"),
        (("name: b,", "name: clip-a,"), "models[1].name: 'clip-a' is given twice"),
        (("name: b,", "name: ../b,"), "models[1].name: '../b' is no folder name"),
        (("control: shuffled", "resume: true"), "protocols[1].resume: unknown key 'resume'"),
        (("options:", "option:"), "plan: unknown key 'option'"),
        (("name: b,", "name: b, protocols: [paper],"), "models[1].protocols: 'paper' is none"),
        (("models:", "models: []\nx:"), "plan: unknown key 'x'"),
    ],
)
def test_a_bad_plan_is_one_line_naming_the_key(change: tuple[str, str], fragment: str) -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(PLAN.replace(*change))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_the_command_refuses_a_bad_plan_a_foreign_folder_and_a_changed_cell(
    tmp_path: Path, capsys
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.replace("limit: 4", "limit: -1"), encoding="utf-8")
    out = tmp_path / "sweep"
    refused(bla_eval, ["sweep", plan, "--output", out], capsys, "limit must be at least 1")
    assert not out.exists()
    refused(bla_eval, ["sweep", tmp_path / "none.yaml", "--output", out], capsys, "none.yaml")
    plan.write_text(PLAN, encoding="utf-8")
    mine = user_folder(tmp_path / "mine")
    refused(bla_eval, ["sweep", plan, "--output", mine], capsys, "not a bla-eval sweep folder")
    # a folder the sweep recorded: a cell already there may not change its scores' settings
    folder = SweepFolder(out)
    folder.record(parse_plan(PLAN))
    (out / "bla" / "zero-shot" / "clip-a").mkdir(parents=True)
    changed = PLAN.replace("limit: 4", "limit: 5")
    plan.write_text(changed, encoding="utf-8")
    refused(
        bla_eval,
        ["sweep", plan, "--output", out],
        capsys,
        "the plan changes cell bla/zero-shot/clip-a",
        "(limit: 4 -> 5)",
    )
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    refused(bla_eval, ["sweep", plan, "--output", out], capsys, "did not write (notes.txt)")


@pytest.mark.parametrize(("executor", "module"), [("ray", "ray"), ("slurm", "submitit")])
def test_an_executor_without_its_package_names_the_sweep_extra(
    executor: str, module: str, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    out = tmp_path / "sweep"
    argv = ["sweep", str(plan), "--output", str(out), "--executor", executor]
    result = run_without([module], "bla_eval.cli", argv)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f'bla-eval sweep: error: {module} is missing: pip install "bla-benchmark[sweep]"'
    )
    assert not out.exists()


def test_the_leaderboards_without_the_analysis_extra_are_one_line(
    tmp_path: Path, monkeypatch
) -> None:
    import sys

    from bla_eval.sweep.report import leaderboards

    monkeypatch.setitem(sys.modules, "pandas", None)  # the standard way to make it unimportable
    monkeypatch.delitem(sys.modules, "bla_eval.analysis.compare", raising=False)
    assert leaderboards(SweepFolder(tmp_path), parse_plan(PLAN).cells, 10) == (
        'No leaderboards: pandas is missing: pip install "bla-benchmark[analysis]"\n'
    )
