"""One interval per number in the run's report: a share of datapoints gets its exact interval
from its value and n, in a new run and an older one alike; 0 / 0 and no variation are words."""

from __future__ import annotations

import pytest
from bla_eval.report import (
    NO_VARIATION,
    OLDER_RUN_NOTE,
    UNDEFINED,
    markdown_table,
    paper_tables,
    run_interval,
)

from bla_metric import formulas


def _results(method: str) -> dict:
    """A results.json of 30 datapoints: set accuracy 0/30, every datapoint tied (sentence
    accuracy 0.5 on every resample), a binary view that never says true."""
    ranking = {"sentence_accuracy": 0.5, "set_accuracy": 0.0, "set_error": 0.0}
    binary = {
        "accuracy": 0.5,
        "precision_true": 0.0,
        "precision_false": 0.5,
        "recall_true": 0.0,
        "recall_false": 1.0,
        "all_same_rate": 1.0,
    }
    intervals = {
        "ranking": {k: [v, v] for k, v in ranking.items()},  # what the percentile bootstrap gave
        "binary": {k: [v, v] for k, v in binary.items()},
    }
    return {
        "benchmark": "bla",
        "model": "random",
        "kind": "itm",
        "tasks": {"active_passive": {"n": 30, "ranking": ranking, "binary": binary}},
        "confidence_intervals": {"method": method, "tasks": {"active_passive": intervals}},
    }


@pytest.mark.parametrize(
    "method", ["percentile bootstrap over datapoints", formulas.INTERVAL_METHOD]
)
def test_a_share_has_one_interval_in_old_and_new_runs(method: str) -> None:
    results = _results(method)
    exact = formulas.share_interval(0, 30)
    assert run_interval(results, "active_passive", "ranking", "set_accuracy") == exact
    assert run_interval(results, "active_passive", "binary", "all_same_rate") == (
        formulas.share_interval(30, 30)
    )
    assert run_interval(results, "active_passive", "ranking", "sentence_accuracy") == NO_VARIATION
    assert run_interval(results, "active_passive", "binary", "precision_true") == UNDEFINED
    text = markdown_table(results)
    assert "[0.00, 11.57]" in text and "[0.00, 0.00]" not in text and "[50.00, 50.00]" not in text
    assert (OLDER_RUN_NOTE in text) == (method != formulas.INTERVAL_METHOD)
    rows = paper_tables(results)[-1].rows
    set_row = next(r for r in rows if r[2] == "set accuracy")
    assert set_row[4:] == [0.0, pytest.approx(100 * exact[1])]
    precision = next(r for r in rows if r[1] == "binary" and r[2] == "precision true")
    assert precision[3:] == [UNDEFINED, UNDEFINED, UNDEFINED]
