"""The Space's results store lists only runs whose results.json follows from their scores."""

from __future__ import annotations

from tests.bla_eval.commands import copy_run, duplicated, tampered


def test_the_spaces_results_store_skips_a_run_that_disagrees_with_its_scores(co_run, tmp_path):
    from bla_space import results_store

    copy_run(co_run, tmp_path, "good")
    tampered(copy_run(co_run, tmp_path, "tampered"))
    duplicated(copy_run(co_run, tmp_path, "duplicated"))
    assert [r.path.name for r in results_store.list_runs(tmp_path)] == ["good"]
