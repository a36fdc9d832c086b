"""bla_metric.neighbours.winoground: text, image and group scores on hand-made cases, ties."""

from __future__ import annotations

import pytest

from bla_metric.neighbours.winoground import winoground_metrics, winoground_outcomes


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        ([[2, 1], [1, 2]], (True, True, True)),  # diagonal wins everywhere
        ([[2, 1], [0, 0.5]], (True, False, False)),  # captions right, image 0 wins caption 1? no
        ([[2, 3], [1, 4]], (False, True, False)),  # image right, text wrong for image 0
        ([[1, 1], [1, 1]], (False, False, False)),  # all tied: every comparison fails
        ([[2, 1], [1, 1]], (False, False, False)),  # one tie in each score
        ([[1, 2], [2, 1]], (False, False, False)),  # fully swapped
    ],
)
def test_winoground_hand_cases(matrix, expected):
    out = winoground_outcomes([matrix])
    got = (bool(out["text_score"][0]), bool(out["image_score"][0]), bool(out["group_score"][0]))
    assert got == expected


def test_winoground_second_case_by_hand():
    # s(C0,I0)=2 > s(C1,I0)=1 and s(C1,I1)=0.5 > s(C0,I1)=0: text ok;
    # s(C0,I0)=2 > s(C0,I1)=0 but s(C1,I1)=0.5 < s(C1,I0)=1: image fails.
    out = winoground_outcomes([[[2, 1], [0, 0.5]]])
    assert out["text_score"][0] and not out["image_score"][0]


def test_winoground_metrics_and_groups():
    scores = [[[2, 1], [1, 2]], [[2, 1], [0, 0.5]], [[1, 1], [1, 1]], [[2, 3], [1, 4]]]
    result = winoground_metrics(scores, groups=["Object", "Object", "Relation", "Both"])
    assert result["text_score"] == 0.5
    assert result["image_score"] == 0.5
    assert result["group_score"] == 0.25
    assert result["n"] == 4
    assert result["per_group"]["Object"] == {
        "text_score": 1.0,
        "image_score": 0.5,
        "group_score": 0.5,
        "n": 2,
    }
    assert result["per_group"]["Relation"]["text_score"] == 0.0


def test_winoground_bad_input():
    with pytest.raises(ValueError, match="datapoint 1: predictions must be a 2x2"):
        winoground_metrics([[[1, 2], [3, 4]], [1, 2, 3, 4]])
    with pytest.raises(ValueError, match="datapoint 0"):
        winoground_metrics([[[1, float("inf")], [3, 4]]])
