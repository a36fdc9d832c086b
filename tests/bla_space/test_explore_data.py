"""bla_space.explore_data: the Explore tab's filters and sentence table on a scored run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_space import explore_data

from bla_metric.formulas import ranking_metrics


@pytest.fixture(scope="module")
def run_scores(built_dataset, tmp_path_factory) -> tuple[Path, dict]:
    """A scores.jsonl of 6 AP datapoints, every second one a set error."""
    run = tmp_path_factory.mktemp("run")
    ids = explore_data.select_ids(str(built_dataset), "active_passive", {})[:6]
    lines = []
    for n, point_id in enumerate(ids):
        scores = [0.1, 0.2, 0.8, 0.9] if n % 2 else [0.9, 0.8, 0.2, 0.1]
        lines.append(
            {
                "task": "active_passive",
                "id": point_id,
                "scores": scores,
                "labels": [1, 1, 0, 0],
                "caption_types": ["TA", "TP", "FA", "FP"],
            }
        )
    (run / "scores.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run, {line["id"]: line for line in lines}


def test_explore_filters_set_errors_and_verbs(built_dataset, run_scores):
    data = str(built_dataset)
    run, lines = run_scores
    scores = explore_data.load_scores(str(run))
    ids = explore_data.select_ids(data, "active_passive", scores)
    assert ids == list(lines)  # the run's own datapoints: the slider counts them
    failures = explore_data.select_ids(data, "active_passive", scores, failures_only=True)
    expected = [
        i
        for i, line in lines.items()
        if ranking_metrics([line["scores"]], [line["labels"]])["set_error"] == 1
    ]
    assert failures == expected and len(failures) == 3
    verbs = explore_data.verbs(data, "active_passive")
    assert verbs[0] == "watches" and explore_data.verbs(data, "coordination") == []
    watching = explore_data.select_ids(data, "active_passive", {}, verb="watches")
    assert 20 < len(watching) < 613
    assert all(
        explore_data.datapoint(data, "active_passive", i)["predicate"] == "watches"
        for i in watching[:3]
    )


def test_sentence_table_marks_each_sentence(built_dataset, run_scores):
    run, lines = run_scores
    first, second = list(lines)[:2]
    row = explore_data.datapoint(str(built_dataset), "active_passive", second)
    assert row["image"].mode == "RGB" and len(row["captions"]) == 4
    table = explore_data.sentence_table(row, lines[second])
    assert list(table["truth"]) == ["true", "true", "false", "false"]
    assert list(table["rank"]) == [4, 3, 2, 1]
    assert list(table["ranked correctly"]) == ["no"] * 4
    good = explore_data.sentence_table(row, lines[first])
    assert list(good["ranked correctly"]) == ["yes"] * 4
    bare = explore_data.sentence_table(row, None)
    assert list(bare["sentence"]) == row["captions"] and set(bare["score"]) == {""}


def test_scores_that_rank_apart_never_look_tied(built_dataset, run_scores):
    """Sentence scores equal to 4 decimals but not equal (a tiny model's near ties) are shown
    with the decimals that tell them apart; equal ones stay equal."""
    run, lines = run_scores
    first = list(lines)[0]
    row = explore_data.datapoint(str(built_dataset), "active_passive", first)
    close = {**lines[first], "scores": [0.51234561, 0.51234549, 0.2, 0.2]}
    shown = list(explore_data.sentence_table(row, close)["score"])
    assert shown == ["0.512346", "0.512345", "0.200000", "0.200000"]
    assert list(explore_data.sentence_table(row, lines[first])["score"])[0] == "0.9000"
