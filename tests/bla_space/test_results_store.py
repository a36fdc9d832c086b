"""bla_space.results_store: the finished runs of the results folder, newest first, without partial
or broken ones or runs whose results.json does not follow from their scores; safe folder names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.outputs import staged
from bla_space import results_store

from tests.bla_eval.commands import copy_run, duplicated, tampered
from tests.bla_space.documents import results_document


def test_the_spaces_results_store_skips_a_run_that_disagrees_with_its_scores(co_run, tmp_path):
    from bla_space import results_store

    copy_run(co_run, tmp_path, "good")
    tampered(copy_run(co_run, tmp_path, "tampered"))
    duplicated(copy_run(co_run, tmp_path, "duplicated"))
    assert [r.path.name for r in results_store.list_runs(tmp_path)] == ["good"]


SCORES_OF_RESULTS = [[4, 3, 2, 1], [1, 2, 3, 4], [4, 1, 3, 2], [4, 1, 3, 2]]
"""Four datapoints whose metrics are those of ``results_document(..., 4, ...)`` (set accuracy and
set error 0.25, sentence and binary accuracy 0.5): the scores.jsonl a run of them writes."""


def _publish(results_dir: Path, results: dict) -> Path:
    target = results_store.new_run_path(results_dir, results["model"])
    types = ["TP1", "TP2", "FP1", "FP2"]
    records = [
        {"task": "active_passive", "id": f"ap-{k}", "scores": s, "labels": [1, 1, 0, 0]}
        | {"caption_types": types}
        for k, s in enumerate(SCORES_OF_RESULTS)
    ]
    with staged(target) as staging:
        (staging / "results.json").write_text(json.dumps(results))
        (staging / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return target


def test_runs_are_listed_newest_first_without_partial_or_broken_ones(tmp_path):
    old = _publish(tmp_path, results_document("org/a", 4, "2026-01-01T00:00:00"))
    new = _publish(tmp_path, results_document("org/b", 4, "2026-02-01T00:00:00"))
    with pytest.raises(RuntimeError), staged(results_store.new_run_path(tmp_path, "org/c")) as part:
        (part / "results.json").write_text(json.dumps(results_document("org/c", 4, "2026-03-01")))
        (tmp_path / "broken").mkdir()
        (tmp_path / "broken" / "results.json").write_text("{not json")
        assert [r.path for r in results_store.list_runs(tmp_path)] == [new, old]
        assert results_store.find_run(tmp_path, old.name).results["model"] == "org/a"
        raise RuntimeError("the run failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([old.name, new.name, "broken"])


def test_run_folder_names_are_safe_and_unique():
    first = results_store.run_folder_name("/tmp/x/tiny clip")
    assert first.startswith("tiny_clip-") and "/" not in first
    assert results_store.run_folder_name("org/name") != results_store.run_folder_name("org/name")


def test_a_results_json_nested_100000_deep_is_skipped_and_the_store_still_lists(tmp_path):
    run = tmp_path / "deep"
    run.mkdir()
    (run / "results.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (run / "scores.jsonl").write_text("", encoding="utf-8")
    assert results_store.list_runs(tmp_path) == []


def test_the_cells_of_a_sweep_folder_are_runs_of_the_store(co_run, tmp_path):
    """A sweep folder (``bla-eval sweep --output``) as the results folder, or inside it: its
    finished cells are runs of the Space, an unfinished one and a foreign folder are not."""
    from bla_eval.sweep.folder import SweepFolder
    from bla_eval.sweep.plan import parse_plan

    plan = parse_plan(
        "models: [{model: m1, name: a}, {model: m2, name: b}, {model: m3, name: c}]\n"
        "benchmarks: [bla]\nprotocols: [zero-shot]\n",
        "plan.yaml",
    )
    sweep = SweepFolder(tmp_path / "sweep")
    sweep.record(plan)
    ids = [cell.id for cell in plan.cells]
    for cell_id in ids[:2]:
        copy_run(co_run, sweep.path, cell_id)
    (sweep.path / ids[2]).mkdir(parents=True)  # a cell that has not finished
    copy_run(co_run, tmp_path / "sweep" / "bla", "not-a-cell")
    cells = sorted(sweep.path / cell_id for cell_id in ids[:2])
    assert sorted(r.path for r in results_store.list_runs(sweep.path)) == cells
    copy_run(co_run, tmp_path, "single")
    found = sorted(r.path for r in results_store.list_runs(tmp_path))
    assert found == sorted([*cells, tmp_path / "single"])


def test_a_stored_markers_cells_are_read_only_inside_it_and_not_through_links(co_run, tmp_path):
    """A results repo whose sweep marker lists an absolute cell path, a cell above it, or a cell
    that is a link to a run outside the store: none is read or listed; its own cell is."""
    from bla_eval.outputs import OWNER_FILE
    from bla_eval.sweep.folder import SWEEP_COMMAND

    private = copy_run(co_run, tmp_path / "home" / "private-runs", "x")
    store = tmp_path / "store"
    repo = store / "repo"
    copy_run(co_run, repo / "bla" / "zero-shot", "good")
    (repo / "bla" / "zero-shot" / "linked").symlink_to(private)
    (repo / "bla" / "linked-protocol").symlink_to(private.parent)
    cells = [
        str(private),
        "bla/zero-shot/good",
        "bla/zero-shot/linked",
        "bla/linked-protocol/x",
        "../../home/private-runs/x",
        "/" + str(private).lstrip("/"),
    ]
    marker = {"command": SWEEP_COMMAND, "files": [], "cells": cells}
    (repo / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    (store / "linked-run").symlink_to(private)  # a run folder of the store that is a link
    assert [r.path for r in results_store.list_runs(repo)] == [repo / "bla/zero-shot/good"]
    assert [r.path for r in results_store.list_runs(store)] == [repo / "bla/zero-shot/good"]
    assert results_store.inside(repo, str(private)) is None


@pytest.mark.parametrize("bad", [{"cell": "bla/zero-shot/good"}, ["bla"], 7, None])
def test_a_marker_listing_a_cell_as_no_name_skips_that_entry_only(co_run, tmp_path, bad):
    """A damaged sweep marker (a cell listed as an object, a list, a number, null) is read like
    every other bad entry: that entry is left out, the folder's good cell is listed, and every
    tab that lists runs still does; a marker whose ``cells`` is no list lists none."""
    from bla_eval.outputs import OWNER_FILE
    from bla_eval.sweep.folder import SWEEP_COMMAND
    from bla_space import analysis_tab, explore_tab, leaderboard_tab
    from bla_space.config import SpaceConfig

    sweep = tmp_path / "sweep"
    copy_run(co_run, sweep / "bla" / "zero-shot", "good")
    marker = {"command": SWEEP_COMMAND, "files": [], "cells": [bad, "bla/zero-shot/good"]}
    (sweep / OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    good = sweep / "bla/zero-shot/good"
    assert [r.path for r in results_store.list_runs(sweep)] == [good]
    assert [r.path for r in results_store.list_runs(tmp_path)] == [good]
    config = SpaceConfig(dataset="unused", results_dir=sweep, space_runs=tmp_path / "own")
    assert [key for _, key in analysis_tab.run_choices(config)] == ["bla/zero-shot/good"]
    assert "bla/zero-shot/good" in [key for _, key in explore_tab.run_choices(config)]
    board = leaderboard_tab.leaderboard(config, "ranking")
    assert board["source"].str.startswith("sweep cell bla/zero-shot/good").any()
    (sweep / OWNER_FILE).write_text(json.dumps({**marker, "cells": bad}), encoding="utf-8")
    assert results_store.list_runs(sweep) == []
