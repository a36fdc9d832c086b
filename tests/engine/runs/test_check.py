"""The consistency rule of a run folder's records, and the protocol a results document records."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.runs import protocol_name
from bla_eval.runs.check import check_records, first_difference, is_probabilistic, scores_path

PATH = Path("run/scores.jsonl")


def numbered(*keys: tuple[str, str]) -> list[tuple[int, dict]]:
    return [(n, {"task": t, "id": i, "scores": [0.0]}) for n, (t, i) in enumerate(keys, 1)]


def test_records_are_grouped_by_task_in_file_order():
    records = numbered(("co", "2"), ("ap", "1"), ("co", "1"))
    by_task = check_records(PATH, records, ["ap", "co", "rc"])
    assert {t: [r["id"] for r in rs] for t, rs in by_task.items()} == {
        "ap": ["1"],
        "co": ["2", "1"],
        "rc": [],
    }


@pytest.mark.parametrize(
    ("keys", "selected", "message"),
    [
        (
            [("co", "1"), ("wg", "1")],
            None,
            "line 2 scores task 'wg', which the run does not select",
        ),
        ([("co", "1"), ("co", "9")], {("co", "1")}, "line 2 scores co datapoint '9', which the"),
        (
            [("co", "1"), ("co", "1")],
            None,
            r"line 2 scores co datapoint '1' again \(first on line 1",
        ),
    ],
)
def test_a_foreign_or_repeated_record_is_named_by_line(keys, selected, message):
    with pytest.raises(ValueError, match=f"^{PATH}: {message}"):
        check_records(PATH, numbered(*keys), ["co"], selected)


def test_first_difference_names_the_path_of_the_first_number_that_differs():
    stored = {"n": 3, "ranking": {"acc": 0.5, "ci": [0.1, 0.9]}, "note": "x"}
    assert (
        first_difference(stored, {"n": 3, "ranking": {"acc": 0.5 + 1e-12, "ci": [0.1, 0.9]}})
        is None
    )
    assert first_difference(stored, {"ranking": {"acc": 0.5, "ci": [0.1, 0.8]}}) == (
        "ranking.ci[1]",
        0.9,
        0.8,
    )
    assert first_difference({"a": float("nan")}, {"a": float("nan")}) is None
    assert first_difference({"a": "1"}, {"a": 1}) == ("a", "1", 1)


def test_the_scores_file_is_a_name_inside_the_folder():
    folder = Path("run")
    assert scores_path(folder, {}) == folder / "scores.jsonl"
    assert scores_path(folder, {"scores_file": "other.jsonl"}) == folder / "other.jsonl"
    with pytest.raises(ValueError, match="is not a file name inside the run folder"):
        scores_path(folder, {"scores_file": "../elsewhere.jsonl"})


def test_the_protocol_and_binary_view_a_run_records():
    assert protocol_name({}) == "zero-shot" == protocol_name({"protocol": {"tasks": []}})
    assert protocol_name({"protocol": {"name": "icl-sd"}}) == "icl-sd"
    assert protocol_name({"protocol": "paper"}) == "paper"
    assert is_probabilistic({"protocol": {"binary_view": "threshold 0.5"}})
    assert not is_probabilistic({"protocol": {"binary_view": "top-k"}}) and not is_probabilistic({})
