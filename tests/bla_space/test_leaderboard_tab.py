"""bla_space.leaderboard_tab: the smallest detectable difference as the page words it."""

from __future__ import annotations

from bla_space.leaderboard_tab import detectable_text


def test_runs_that_agree_everywhere_have_no_detectable_difference_to_state():
    assert "undefined" in detectable_text({"sd": 0.0, "mde": 0.0})
    assert "undefined" in detectable_text({"sd": float("nan"), "mde": float("nan")})
    text = detectable_text({"sd": 0.3, "mde": 0.052})
    assert text.startswith("smallest detectable difference 5.2 points")
