"""bla_space.views: the metrics table, the bar frame, and the leaderboard (one row per model and
protocol, the runs that reproduce a published row marked)."""

from __future__ import annotations

import pytest
from bla_space import views

from bla_metric import formulas, references
from bla_metric.published import SETUPS, numbers_of
from tests.bla_space.documents import results_document


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


def test_metrics_table_puts_the_run_above_the_published_rows():
    table = views.metrics_table(results_document("org/a", 4, "2026"), "ranking")
    assert list(table["model"][:2]) == ["org/a", "Chance"]
    assert table.loc[0, "AP set acc"] == 25.0
    assert list(table.columns) == views.metrics_table_columns()
    assert table.loc[0, "CO sent. acc"] is None  # not scored by the run; chance has it
    assert table.loc[1, "CO sent. acc"] == 50.0
    binary = views.metrics_table(results_document("org/a", 4, "2026"), "binary")
    assert len(binary.columns) == len(table.columns) and binary.loc[0, "AP acc"] == 50.0
    clip = table[(table["model"] == "CLIP")].iloc[0]
    published = references.reference_rows("active_passive", "ranking")
    expected = next(r for r in published if r["model"] == "CLIP")["set_accuracy"]
    assert clip["AP set acc"] == round(100 * expected, 2) == 6.2


def test_bar_frame_has_the_run_first_then_chance_people_and_models():
    frame = views.bar_frame(results_document("org/a", 4, "2026"), "binary", "active_passive")
    assert frame.iloc[0].to_dict() == {"model": "a", "value": 50.0, "group": "this run"}
    humans = frame[frame["model"] == "Humans"].iloc[0]
    assert (humans["value"], humans["group"]) == (92.0, "people")
    assert set(frame["group"]) == set(views.GROUP_COLORS)


def test_leaderboard_keeps_the_most_complete_run_per_model_and_protocol():
    runs = [
        results_document("org/a", 613, "2026-01-01", set_accuracy=0.1),
        results_document("org/a", 4, "2026-02-01", set_accuracy=0.9),  # later but a quick run
        results_document("org/b", 4, "2026-01-01"),
    ]
    board = views.leaderboard_table(runs, "ranking")
    assert list(board.columns) == views.leaderboard_columns()
    mine = board[board["model"] == "org/a"]
    assert len(mine) == 1 and mine.iloc[0]["AP set acc"] == 10.0
    assert mine.iloc[0]["protocol"] == "zero-shot, top-k, cosine"
    assert {"Chance", "CLIP", "Experts", "org/b"} <= set(board["model"])
    headline = board["AP sent. acc"].astype(float)
    assert list(headline) == sorted(headline, reverse=True)  # sorted by mean sentence accuracy


def test_metrics_table_gives_the_runs_intervals_below_it():
    results = results_document("org/a", 4, "2026")
    ci = {"sentence_accuracy": [0.4, 0.5102], "set_accuracy": [0.1, 0.4]}
    results["confidence_intervals"] = {"tasks": {"active_passive": {"ranking": ci}}}
    table = views.metrics_table(results, "ranking")
    assert list(table["source"][:2]) == [views.THIS_RUN, views.CI_SOURCE]
    assert table.loc[1, "AP sent. acc"] == "[40.00, 51.02]"
    assert table.loc[1, "AP set err"] is None and table.loc[1, "CO sent. acc"] is None
    # set accuracy is a share: its exact interval from the value and n, as in every table
    n = results["tasks"]["active_passive"]["n"]
    value = results["tasks"]["active_passive"]["ranking"]["set_accuracy"]
    low, high = (100 * v for v in formulas.share_interval(round(value * n), n))
    assert table.loc[1, "AP set acc"] == f"[{low:.2f}, {high:.2f}]"
    assert list(table.columns) == views.metrics_table_columns()


def test_a_local_models_run_is_named_by_its_folder_not_its_path():
    run = results_document("/home/someone/models/tiny-clip", 4, "2026")
    assert views.display_name(run) == "tiny-clip"
    assert views.display_name({**run, "display_name": "mine"}) == "mine"
    assert views.display_name(results_document("org/a", 4, "2026")) == "org/a"


def test_leaderboard_rows_follow_the_first_tasks_headline_and_a_run_knows_its_row():
    """Rows sorted by the headline columns in task order (a visible order); one row per model
    and protocol, the most complete run; a run the row does not show is told which it shows."""
    small = results_document("org/a", 4, "2026-02-01T00:00:00")
    large = results_document("org/a", 8, "2026-01-01T00:00:00")
    other = results_document("org/b", 4, "2026-03-01T00:00:00")
    for doc, value in ((small, 0.9), (large, 0.6), (other, 0.7)):
        doc["tasks"]["active_passive"]["ranking"]["sentence_accuracy"] = value
    board = views.leaderboard_table([small, large, other], "ranking")
    column = [v for v in board["AP sent. acc"] if v is not None]
    assert column == sorted(column, reverse=True) and len(column) == len(board)
    assert list(board[board["model"] == "org/a"]["datapoints"]) == [8]
    assert "lists the run of 8 datapoints of 2026-01-01, not this one" in views.listing_line(
        small, [small, large, other]
    )
    assert "It is listed on the **Leaderboard**" in views.listing_line(large, [small, large])


def test_column_widths_give_each_header_its_longest_word():
    """The rank table's headers ("sentence accuracy", "not separated") get room for their longest
    word, number columns the room of a number, and the widths fill the table."""
    columns = ["task", "model", "sentence accuracy", "CI low", "rank", "not separated"]
    widths = dict(zip(columns, (float(w[:-1]) for w in views.column_widths(columns)), strict=True))
    assert sum(widths.values()) == pytest.approx(100, abs=0.5)
    assert widths["CI low"] == widths["rank"] == widths["task"]
    assert widths["sentence accuracy"] == pytest.approx(widths["rank"] * 8 / 5, abs=0.1)
    assert widths["not separated"] > widths["sentence accuracy"]
    assert views.column_widths([""]) == ["100.0%"]
