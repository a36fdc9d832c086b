"""The Space's published-scores section: its setting, and the runs it ranks together (the pull
and the ranking through the stand-in Hub: ``tests/hub/test_published_scores.py``)."""

from __future__ import annotations

import pytest
from bla_space import published
from bla_space.config import SpaceConfig


def test_the_setting_names_results_repos() -> None:
    config = SpaceConfig.from_env({"BLA_PUBLISHED_RESULTS": " me/results , you/bla-scores "})
    assert config.published_repos == ("me/results", "you/bla-scores")
    assert SpaceConfig.from_env({}).published_repos == ()
    with pytest.raises(ValueError, match="BLA_PUBLISHED_RESULTS: '../x' is not a Hub dataset"):
        SpaceConfig.from_env({"BLA_PUBLISHED_RESULTS": "me/results,../x"})


class FakeRun:
    def __init__(self, ids: list[str]) -> None:
        self.records = {"coordination": [{"id": i} for i in ids]}


def test_only_runs_on_the_same_datapoints_are_ranked_together() -> None:
    a, b, c = FakeRun(["1", "2"]), FakeRun(["1", "2"]), FakeRun(["1"])
    assert published.same_datapoints([a, c, b]) == [a, b]
    assert published.same_datapoints([a, c]) == []
    assert published.statistics([], None, "sentence_accuracy", 10)[1:] == (None, None)
