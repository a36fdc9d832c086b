"""``bla-eval sweep``'s plan and folder checks: one error line naming the bad key or entry,
before any cell runs (no model is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.sweep.folder import SweepFolder
from bla_eval.sweep.plan import PlanError, parse_plan

from tests.bla_eval.commands import refused, snapshot, user_folder
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
        (("control: shuffled", "overwrite: true"), "protocols[1].overwrite: unknown key"),
        (("options:", "option:"), "plan: unknown key 'option'"),
        (("name: b,", "name: b, protocols: [paper],"), "models[1].protocols: 'paper' is none"),
        (("models:", "models: []\nx:"), "plan: unknown key 'x'"),
    ],
)
def test_a_bad_plan_is_one_line_naming_the_key(change: tuple[str, str], fragment: str) -> None:
    with pytest.raises(PlanError) as err:
        parse_plan(PLAN.replace(*change))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def in_the_hub_cache(cache: Path, *names: str) -> None:
    """Each Hub id ``names`` as the local Hub cache holds a download (a snapshot folder): the
    plan's models are then found without asking the Hub."""
    for name in names:
        (cache / f"models--{name.replace('/', '--')}" / "snapshots" / ("0" * 40)).mkdir(
            parents=True
        )


def test_the_command_refuses_a_bad_plan_a_foreign_folder_and_a_changed_cell(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    in_the_hub_cache(tmp_path / "hub", "org/clip-a", "org/clip-b")
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


# ----------------------------------------------------------------------------- hostile plans
def _bomb(levels: int = 9) -> str:
    """A YAML alias bomb of ``levels`` levels of 9 (9**9 strings once expanded) as the value of
    ``limit``: its repr in the wrong-type error would never end."""
    rows = ['&l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"&l{k} [{', '.join([f'*l{k - 1}'] * 9)}]" for k in range(1, levels)]
    return "[" + ", ".join(rows) + "]"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (_bomb(), "plan: more than 100000 values with its aliases expanded (line 11)"),
        ("[" * 20_000 + "]" * 20_000, "plan: nested deeper than 16 levels (line 11)"),
    ],
)
def test_an_alias_bomb_or_a_deep_plan_is_one_line_at_once(value: str, fragment: str) -> None:
    import time

    start = time.perf_counter()
    with pytest.raises(PlanError) as err:
        parse_plan(PLAN.replace("limit: 4", f"limit: {value}"))
    assert str(err.value).startswith(fragment), str(err.value)
    assert time.perf_counter() - start < 5


def test_the_command_refuses_a_bomb_a_deep_and_a_huge_plan_in_one_line(
    tmp_path: Path, capsys
) -> None:
    plan, out = tmp_path / "plan.yaml", tmp_path / "sweep"
    plan.write_text(PLAN.replace("limit: 4", f"limit: {_bomb()}"), encoding="utf-8")
    refused(bla_eval, ["sweep", plan, "--output", out], capsys, "more than 100000 values")
    plan.write_text(PLAN.replace("limit: 4", "limit: " + "[" * 20_000 + "]" * 20_000))
    refused(bla_eval, ["sweep", plan, "--output", out], capsys, "nested deeper than 16 levels")
    plan.write_text(PLAN + "#" * (1024 * 1024), encoding="utf-8")
    refused(bla_eval, ["sweep", plan, "--output", out], capsys, "over the 1048576 bytes a plan")
    assert not out.exists()


def test_a_plan_with_aliases_within_bounds_is_read() -> None:
    text = PLAN.replace("kind: clip}", "kind: &k clip}").replace("name: b,", "name: b, kind: *k,")
    assert parse_plan(text).cells[1].settings["kind"] == "clip"


# ----------------------------------------------------------------------------- folder names
def test_a_name_with_a_trailing_newline_is_no_folder_name() -> None:
    with pytest.raises(PlanError, match=r"models\[1\].name: 'b\\n' is no folder name"):
        parse_plan(PLAN.replace("name: b,", 'name: "b\\n",'))
    with pytest.raises(PlanError, match="'B' is given twice"):  # one folder where case is ignored
        parse_plan(PLAN.replace("name: b,", "name: B,").replace("org/clip-a,", "org/b,"))


def test_every_folder_the_sweep_derives_is_its_own() -> None:
    """Benchmark ``a--b`` x protocol ``c`` and ``a`` x ``b--c``: two cells, two leaderboards."""
    plan = parse_plan(
        """
models: [{model: org/clip-a, kind: clip}, {model: org/clip-b, kind: clip}]
benchmarks: [{benchmark: bla, name: a--b}, {benchmark: bla, name: a}]
protocols: [{name: c}, {name: b--c}]
"""
    )
    folder = SweepFolder("/sweep")
    pairs = {(c.benchmark, c.protocol) for c in plan.cells}
    assert ("a--b", "c") in pairs and ("a", "b--c") in pairs
    boards = {folder.leaderboard_path(b, p) for b, p in pairs}
    cells = {folder.cell_path(c) for c in plan.cells}
    assert len(boards) == len(pairs) == 4 and len(cells) == len(plan.cells) == 8
    assert not boards & cells


def test_a_link_or_a_foreign_folder_at_any_level_of_the_sweep_is_refused(
    tmp_path: Path, capsys
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    out = tmp_path / "sweep"
    SweepFolder(out).record(parse_plan(PLAN))
    mine = user_folder(tmp_path / "mine")
    before = snapshot(mine)
    (out / "bla").mkdir()
    (out / "bla" / "zero-shot").symlink_to(mine, target_is_directory=True)
    argv = ["sweep", plan, "--output", out]
    refused(bla_eval, argv, capsys, f"{out / 'bla' / 'zero-shot'} is a symbolic link")
    (out / "bla" / "zero-shot").unlink()
    (out / "bla" / "zero-shot").mkdir()
    (out / "bla" / "zero-shot" / "clip-a").symlink_to(mine, target_is_directory=True)
    refused(bla_eval, argv, capsys, "zero-shot/clip-a is a symbolic link")
    (out / "bla" / "zero-shot" / "clip-a").unlink()
    (out / "leaderboards" / "bla").mkdir(parents=True)
    (out / "leaderboards" / "bla" / "zero-shot").symlink_to(mine, target_is_directory=True)
    refused(bla_eval, argv, capsys, "leaderboards/bla/zero-shot is a symbolic link")
    (out / "leaderboards" / "bla" / "zero-shot").unlink()
    (out / "bla" / "mine").mkdir()
    refused(bla_eval, argv, capsys, "holds bla/mine, which bla-eval sweep did not write")
    assert snapshot(mine) == before


@pytest.mark.parametrize("cells", [5, {"bla/zero-shot/clip-a": 1}, "bla/zero-shot/clip-a"])
def test_a_damaged_markers_cells_are_read_as_names_only(tmp_path: Path, cells) -> None:
    """A sweep marker whose ``cells`` is no list lists no cell (its folders are then foreign,
    refused in one line); one listing a cell as an object leaves that entry out."""
    import json

    from bla_eval.outputs import OWNER_FILE

    out = tmp_path / "sweep"
    folder = SweepFolder(out)
    folder.record(parse_plan(PLAN))
    marker = json.loads((out / OWNER_FILE).read_text(encoding="utf-8"))
    (out / "bla" / "zero-shot" / "clip-a").mkdir(parents=True)
    (out / OWNER_FILE).write_text(json.dumps({**marker, "cells": cells}), encoding="utf-8")
    with pytest.raises(
        FileExistsError, match=r"holds entries bla-eval sweep did not write \(bla\)"
    ):
        folder.check_output()
    listed = [{"cell": 1}, ["bla"], 3, "bla/zero-shot/clip-a"]
    (out / OWNER_FILE).write_text(json.dumps({**marker, "cells": listed}), encoding="utf-8")
    folder.check_output()


# ----------------------------------------------------------------------------- finished cells
def test_a_finished_cell_is_trusted_only_with_its_own_settings(
    tiny_clip, built_dataset, tmp_path: Path, capsys, monkeypatch
) -> None:
    """The probe: a finished cell of limit 3, ``sweep.json`` gone, the plan's limit now 5: the
    cell's own ``run.json`` refuses it in one line, and nothing of the folder changes; the same
    plan finds the cell finished (its kind, data and tasks resolved as its run resolved them)."""
    import torch
    from bla_eval.sweep.folder import SWEEP_FILE
    from bla_eval.sweep.job import Job, run_job

    text = f"""
models: [{{model: {tiny_clip}, name: tiny-clip}}]
benchmarks: [{{benchmark: bla, data: {built_dataset}, tasks: [co]}}]
options: {{limit: 3, device: cpu}}
"""
    plan, out = tmp_path / "plan.yaml", tmp_path / "sweep"
    plan.write_text(text, encoding="utf-8")
    (cell,) = parse_plan(text).cells
    SweepFolder(out).record(parse_plan(text))
    monkeypatch.setenv("TQDM_DISABLE", "1")
    threads = torch.get_num_threads()
    outcome = run_job(Job(cell.id, str(out / cell.id), cell.settings, False))  # the worker's
    torch.set_num_threads(threads)
    assert outcome.ok, outcome.error
    (out / SWEEP_FILE).unlink()
    argv = ["sweep", plan, "--output", out, "--quiet", "--resamples", "10"]
    capsys.readouterr()
    assert bla_eval([str(a) for a in argv]) == 0
    assert "0 run now, 1 finished before, 0 failed" in capsys.readouterr().out
    (out / SWEEP_FILE).unlink()
    before = snapshot(out)
    plan.write_text(text.replace("limit: 3", "limit: 5"), encoding="utf-8")
    refused(
        bla_eval,
        argv,
        capsys,
        f"the plan changes cell {cell.id} of {out} (limit: 3 -> 5) against its "
        f"{cell.id}/run.json: give it a new name, or remove {out / cell.id}",
    )
    plan.write_text(text.replace("tasks: [co]", "tasks: [ap]"), encoding="utf-8")
    refused(bla_eval, argv, capsys, "(tasks: ['coordination'] -> ['active_passive'])")
    (out / cell.id / "run.json").unlink()
    refused(bla_eval, argv, capsys, f"cell {cell.id} of {out} has its results.json but no run")
    before.pop(f"{cell.id}/run.json")
    assert snapshot(out) == before


def test_a_sweep_whose_cells_cannot_find_their_data_or_model_runs_none(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """The suite plan before its datasets are built: a data folder that does not exist is no
    Hub id, and neither is a local model folder that does not exist; the sweep stops in one
    line before any cell runs or anything is written."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "models: [{model: org/clip-a, kind: clip}]\n"
        "benchmarks: [{benchmark: aro, data: aro_dataset}, {benchmark: mmvp-vlm, data: "
        "mmvp_vlm_dataset}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "sweep"
    refused(
        bla_eval, ["sweep", plan, "--output", out], capsys,
        "2 of the 2 cells to run cannot run, so none was started",
        "aro/zero-shot/clip-a: dataset folder aro_dataset does not exist",
    )  # fmt: skip
    assert not out.exists()
    (tmp_path / "aro_dataset").mkdir()
    (tmp_path / "mmvp_vlm_dataset").mkdir()
    plan.write_text(
        "models: [{model: ./tiny-llava}]\nbenchmarks: [{benchmark: aro, data: aro_dataset}]\n",
        encoding="utf-8",
    )
    refused(
        bla_eval, ["sweep", plan, "--output", out], capsys,
        "aro/zero-shot/tiny-llava: model './tiny-llava' is not a local folder",
    )  # fmt: skip
    assert not out.exists()
