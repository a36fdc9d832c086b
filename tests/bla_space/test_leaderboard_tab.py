"""bla_space.leaderboard_tab: the smallest detectable difference as the page words it."""

from __future__ import annotations

import pytest
from bla_space.leaderboard_tab import detectable_text


def test_runs_that_agree_everywhere_have_no_detectable_difference_to_state():
    assert "undefined" in detectable_text({"sd": 0.0, "mde": 0.0})
    assert "undefined" in detectable_text({"sd": float("nan"), "mde": float("nan")})
    text = detectable_text({"sd": 0.3, "mde": 0.052})
    assert text.startswith("smallest detectable difference 5.2 points")


def test_a_sweep_folders_cells_are_labelled_and_ranked_like_with_like(
    co_run, tiny_clip, built_dataset, tmp_path
):
    """Two models' zero-shot cells and one model's control cell: the table names each cell and
    its control, and the rank intervals rank the two zero-shot cells only, best first."""
    import json
    import shutil

    from bla_eval.config import RunConfig
    from bla_eval.outputs import OWNER_FILE
    from bla_eval.run import evaluate
    from bla_eval.sweep.folder import SWEEP_COMMAND
    from bla_space import leaderboard_tab
    from bla_space.config import SpaceConfig

    sweep = tmp_path / "sweep"
    cells = ["bla/zero-shot/a", "bla/zero-shot/b", "bla/zero-shot-blank/a"]
    for cell in cells[:2]:
        shutil.copytree(co_run, sweep / cell)
    control = RunConfig(
        str(tiny_clip), sweep / cells[2], data=str(built_dataset), tasks=("co",), limit=3
    )
    evaluate(control.with_(control="blank"))
    marker = {"command": SWEEP_COMMAND, "files": [], "cells": cells}
    (sweep / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    config = SpaceConfig(dataset=str(built_dataset), results_dir=sweep, space_runs=tmp_path / "own")

    ranked = leaderboard_tab.same_datapoint_runs(config)
    assert sorted(run.path for run in ranked) == [sweep / cells[0], sweep / cells[1]]
    text, frame, _ = leaderboard_tab.statistics(config)
    assert "2 runs of **bla · zero-shot** on the same datapoints" in text
    assert len(frame) == 2 and not frame["model"].str.contains("#").any()
    values = [float(v) for v in frame[frame.columns[2]]]
    assert values == sorted(values, reverse=True)

    table = leaderboard_tab.leaderboard(config, "ranking")
    runs = table[table["source"].str.startswith("sweep cell")]
    protocols = ["zero-shot, top-k, cosine", "zero-shot, top-k, cosine, control blank"]
    assert sorted(runs["protocol"]) == protocols
    blank = "sweep cell bla/zero-shot-blank/a; first 3 per task"
    assert blank in set(runs["source"])
    assert not table["source"].str.startswith("Space run").any()


TYPES = {
    "active_passive": ["TA", "TP", "FA", "FP"],
    "coordination": ["TP1", "TP2", "FP1", "FP2"],
    "relative_clause": ["TP1", "TP2", "FP1", "FP2"],
}


def sweep_of(template: dict, root, cells: int, per_task: int):
    """A sweep folder of ``cells`` BLA cells on the same ``per_task`` datapoints of each task,
    each with its own random scores and the results.json its scores give (``template``: a
    real run's results.json)."""
    import copy
    import json
    import random

    from bla_eval.benchmarks import get_benchmark
    from bla_eval.outputs import OWNER_FILE
    from bla_eval.sweep.folder import SWEEP_COMMAND

    bench, rng = get_benchmark("bla"), random.Random(0)
    ids = [f"bla/zero-shot/m{k:03d}" for k in range(cells)]
    for k, cell in enumerate(ids):
        records = {
            task: [
                {"task": task, "id": f"{task}-{i}", "labels": [1, 1, 0, 0], "caption_types": types}
                | {"scores": [rng.random() for _ in range(4)]}
                for i in range(per_task)
            ]
            for task, types in TYPES.items()
        }
        results = copy.deepcopy(template)
        results.pop("confidence_intervals", None)
        results["display_name"], results["created"] = (
            f"m{k:03d}",
            f"2026-01-01T{k // 60:02d}:{k % 60:02d}",
        )
        results["tasks"] = {
            t: bench.summarise(r, False) | {"n": per_task} for t, r in records.items()
        }
        folder = root / cell
        folder.mkdir(parents=True)
        lines = [json.dumps(r) + "\n" for task in records.values() for r in task]
        (folder / "scores.jsonl").write_text("".join(lines), encoding="utf-8")
        (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    marker = {"command": SWEEP_COMMAND, "files": [], "cells": ids}
    (root / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    return root


@pytest.mark.slow
def test_the_rank_intervals_of_300_cells_are_bounded_and_say_so(co_run, built_dataset, tmp_path):
    """300 BLA cells on the same 150 datapoints: the Leaderboard's statistics rank the newest
    ``STATS_MAX_RUNS`` and say so in a line; the rest of the work (reading the runs) grows
    linearly. The time is printed (docs/robustness.md quotes it)."""
    import json
    import time

    from bla_space import leaderboard_tab
    from bla_space.config import SpaceConfig

    template = json.loads((co_run / "results.json").read_text(encoding="utf-8"))
    sweep = sweep_of(template, tmp_path / "sweep", 300, 50)
    config = SpaceConfig(dataset=str(built_dataset), results_dir=sweep, space_runs=tmp_path / "own")
    start = time.perf_counter()
    text, frame, plot = leaderboard_tab.statistics(config)
    seconds = time.perf_counter() - start
    cap = leaderboard_tab.STATS_MAX_RUNS
    assert f"Ranked: the {cap} newest of 300 runs of **bla · zero-shot**" in text, text
    assert set(frame["model"]) == {f"m{k:03d}" for k in range(300 - cap, 300)}
    assert plot is not None
    print(f"statistics of 300 cells x 150 datapoints: {seconds:.1f} s")
