"""bla_space.leaderboard_tab: the smallest detectable difference as the page words it."""

from __future__ import annotations

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
    config = SpaceConfig(dataset=str(built_dataset), results_dir=sweep)

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
    blank = "sweep cell bla/zero-shot-blank/a; partial: the first 3 datapoints per task"
    assert blank in set(runs["source"])
    assert not table["source"].str.startswith("Space run").any()
