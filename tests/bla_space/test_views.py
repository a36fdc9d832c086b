"""The Space's leaderboard marks the runs that reproduce a published row."""

from __future__ import annotations

from bla_space import views

from bla_metric.published import SETUPS, numbers_of


def clip_results(shift: float, model: str = "openai/clip-vit-base-patch32") -> dict:
    """A CLIP run whose metrics are the published CLIP numbers plus ``shift``."""
    tasks: dict = {}
    for n in numbers_of("CLIP"):
        tasks.setdefault(n.task, {"n": 613}).setdefault(n.view, {})[n.metric] = n.value + shift
    protocol = {"name": SETUPS["CLIP"].protocol, "binary_view": "top-k"}
    return {
        "benchmark": "bla",
        "model": model,
        "kind": "contrastive",
        "protocol": protocol,
        "tasks": tasks,
        "created": "2026-03-01T00:00:00+00:00",
    }


def test_leaderboard_marks_a_run_that_reproduces_a_published_row():
    runs = [clip_results(0.001), clip_results(0.05, "org/far-off-clip")]
    board = views.leaderboard_table(runs, "binary")
    sources = dict(zip(board["model"], board["source"], strict=False))
    assert sources["openai/clip-vit-base-patch32"] == "Space run 2026-03-01; reproduces CLIP"
    assert sources["org/far-off-clip"] == "Space run 2026-03-01"


def test_a_run_outside_the_tolerance_is_not_marked():
    assert views.run_source(clip_results(0.05)) == "Space run 2026-03-01"
