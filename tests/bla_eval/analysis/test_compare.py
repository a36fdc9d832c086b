"""``bla-eval compare``: paired bootstrap and exact McNemar on the real SmolLM2 run."""

from __future__ import annotations

import json
import shutil
from math import comb
from pathlib import Path

import pytest
from bla_eval.analysis.cli import compare_main
from bla_eval.analysis.compare import compare
from bla_eval.outputs import OWNER_FILE

from bla_metric.stats import significance

RUN = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "runs" / "smollm2"


def _copy(tmp_path: Path, name: str) -> Path:
    run = tmp_path / name
    shutil.copytree(RUN, run)
    return run


def _rewrite(run: Path, change) -> None:
    """Change the run's score records and derive its results.json from them again (a run whose
    results.json disagrees with its scores is refused)."""
    from bla_eval.benchmarks.bla import summarise

    path = run / "scores.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records = [change(r) for r in records]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    results = json.loads((run / "results.json").read_text())
    probabilistic = results["protocol"].get("binary_view", "").startswith("threshold")
    for task in results["tasks"]:
        mine = [r for r in records if r["task"] == task]
        results["tasks"][task] = summarise(mine, probabilistic)
    (run / "results.json").write_text(json.dumps(results))


def test_identical_runs_differ_by_zero_with_p_one(tmp_path: Path) -> None:
    report, result = compare(RUN, _copy(tmp_path, "b"), tmp_path / "out", resamples=200)
    for task in result.values():
        for view in ("ranking", "binary"):
            for stats in task[view].values():
                assert stats["difference"] == 0 and stats["p_value"] == 1
                assert stats["ci"] == [0, 0]
        assert task["mcnemar_set_accuracy"]["p_value"] == 1
        flip = task["sign_flip_sentence_accuracy"]
        assert flip == {"n": task["n"], "p_value": 1.0, "exact": True}
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        OWNER_FILE,
        "compare.md",
        "compare.json",
        "compare.csv",
        "leaderboard.csv",
        "leaderboard.png",
    }
    assert "| active_passive | ranking | sentence_accuracy |" in report


def test_changed_scores_give_the_exact_mcnemar_p_value(tmp_path: Path) -> None:
    """B: the copy with 9 AP sets turned all right (true sentences lifted above the false) and
    the 2 sets A has right turned all wrong. McNemar by hand: discordant = 9 + 2."""
    records = [json.loads(line) for line in (RUN / "scores.jsonl").read_text().splitlines()]
    ap = [r for r in records if r["task"] == "active_passive"]
    right = [r["id"] for r in ap if min(r["scores"][:2]) > max(r["scores"][2:])]
    assert len(right) == 2  # the recorded run: 2 AP sets all right (set accuracy 0.33%)
    lifted = [r["id"] for r in ap if r["id"] not in right][:9]

    def change(record: dict) -> dict:
        if record["id"] in lifted:
            record["scores"] = [10.0, 9.0, -10.0, -11.0]
        elif record["id"] in right:
            record["scores"] = [-10.0, -11.0, 10.0, 9.0]
        return record

    run_b = _copy(tmp_path, "b")
    _rewrite(run_b, change)
    _, result = compare(RUN, run_b, resamples=300, seed=1)
    m = result["active_passive"]["mcnemar_set_accuracy"]
    assert (m["a_only"], m["b_only"]) == (2, 9)
    by_hand = 2 * sum(comb(11, i) for i in range(3)) / 2**11  # 2 * P(X <= 2), X ~ Bin(11, 1/2)
    assert m["p_value"] == pytest.approx(by_hand, abs=1e-15)
    assert by_hand == pytest.approx(0.0654296875)
    from statsmodels.stats.contingency_tables import mcnemar

    table = [[m["both"], m["a_only"]], [m["b_only"], m["neither"]]]
    assert m["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    set_acc = result["active_passive"]["ranking"]["set_accuracy"]
    assert set_acc["difference"] == pytest.approx((2 - 9) / 613)
    assert set_acc["ci"][0] < set_acc["difference"] < set_acc["ci"][1]
    assert 0 < set_acc["p_value"] <= 1
    _, again = compare(RUN, run_b, resamples=300, seed=1)
    assert again == result  # seeded


def test_runs_on_different_datapoints_are_refused(tmp_path: Path, capsys) -> None:
    run_b = _copy(tmp_path, "b")
    lines = (run_b / "scores.jsonl").read_text().splitlines(keepends=True)
    dropped = next(line for line in lines if '"id": "ap-0007"' in line)
    kept = [line for line in lines if line is not dropped] + [dropped.replace("ap-0007", "ap-9999")]
    (run_b / "scores.jsonl").write_text("".join(kept))
    assert compare_main([str(RUN), str(run_b), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bla-eval compare: error: the runs scored different datapoints of ")
    assert "ap-0007 is only in" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_mcnemar_and_bootstrap_inputs_are_checked() -> None:
    assert significance.mcnemar_exact([1, 0, 1], [1, 0, 1])["p_value"] == 1
    assert significance.mcnemar_exact([1, 1, 1, 1], [0, 0, 0, 0])["p_value"] == 2 / 16
    with pytest.raises(ValueError, match="0 or 1"):
        significance.mcnemar_exact([2, 0], [1, 0])
    with pytest.raises(ValueError, match="resamples"):
        significance.paired_bootstrap([[1, 0]], [[1, 0]], [[1, 0]], resamples=0)


def test_top_two_groupings_and_noun_order_by_hand() -> None:
    from bla_eval.analysis import orders

    types = ["TA", "TP", "FA", "FP"]
    scores = [[1, 2, 3, 4], [4, 1, 3, 2], [4, 2, 1, 3]]  # false on top, active on top, TA+FP on top
    shares = orders.top_two_groupings(scores, types)
    assert shares["truth"] == shares["voice"] == shares["noun_order"] == pytest.approx(1 / 3)
    assert shares["truth:FA+FP"] == shares["voice:TA+FA"] == shares["noun_order:TA+FP"]
    assert orders.noun_order_agreement(scores, types) == pytest.approx(
        {"agreement": 2 / 3, "agent_first": 2 / 3, "patient_first": 0}
    )
    assert orders.top_two_groupings([[1, 1, 1, 1]], types)["truth"] == 0  # ties count for none
    with pytest.raises(ValueError, match="caption type 'FP'"):
        orders.noun_order_agreement([[1, 2, 3]], ["TA", "TP", "FA"])


def test_a_difference_without_variation_is_inconclusive_not_an_interval(tmp_path: Path) -> None:
    """Every datapoint tied in A (sentence accuracy 0.5), right in B (1.0): the resampled
    difference is -50 on every resample. No [-50.00, -50.00] and no p-value is printed."""
    tied, right = _copy(tmp_path, "tied"), _copy(tmp_path, "right")
    _rewrite(tied, lambda r: {**r, "scores": [0.5] * len(r["scores"])})
    _rewrite(right, lambda r: {**r, "scores": [float(v) for v in r["labels"]]})
    report, result = compare(tied, right, tmp_path / "out", resamples=200)
    for task in result.values():
        stats = task["ranking"]["sentence_accuracy"]
        assert stats["difference"] == -0.5 and stats["variation"] is False
    assert "inconclusive (no variation)" in report and "[-50.00, -50.00]" not in report
    frame = (tmp_path / "out" / "compare.csv").read_text().splitlines()
    row = next(line for line in frame if ",sentence_accuracy," in line)
    assert row.endswith(",,,")  # CI low, CI high and p are empty, not numbers


def test_a_precision_of_zero_over_zero_is_undefined(tmp_path: Path) -> None:
    """A run that never labels a sentence true (scores below every true one's threshold)."""
    from bla_eval.analysis.compare import comparison_frame

    result = {
        "ap": {
            "ranking": {},
            "binary": {
                "precision_true": {
                    "a": 0.0,
                    "b": 0.5,
                    "difference": -0.5,
                    "ci": [-0.6, -0.4],
                    "p_value": 0.001,
                    "variation": True,
                    "undefined": ["A"],
                }
            },
        }
    }
    row = comparison_frame(result).iloc[0]
    assert row["A"] != row["A"] and row["B"] == 50.0 and row["A-B"] != row["A-B"]
