"""``bla-eval compare`` over several runs: rank intervals, tied groups, tables, refusals."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from bla_eval.analysis.cli import compare_main
from bla_eval.analysis.compare import compare_many
from bla_eval.report import run_interval

from bla_metric import formulas

RUN = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "runs" / "smollm2"


def _run(tmp_path: Path, name: str, change=None, display: str | None = None) -> Path:
    """A copy of the recorded run, its scores changed by ``change(record) -> scores`` and its
    results.json derived from them again."""
    from bla_eval.benchmarks.bla import summarise

    run = tmp_path / name
    shutil.copytree(RUN, run)
    path = run / "scores.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    if change is not None:
        for k, record in enumerate(records):
            record["scores"] = change(k, record)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    results = json.loads((run / "results.json").read_text())
    for task in results["tasks"]:
        results["tasks"][task] = summarise([r for r in records if r["task"] == task], False)
    if display:
        results["display_name"] = display
    (run / "results.json").write_text(json.dumps(results))
    return run


def _good(k: int, record: dict) -> list[float]:
    """True sentences above false ones on 9 datapoints of 10."""
    right = [float(y) for y in record["labels"]]
    return right if k % 10 else [1.0 - y for y in right]


def _good_twin(k: int, record: dict) -> list[float]:
    """As :func:`_good`, turned the other way on four datapoints (two more right, two more
    wrong): the same up to noise."""
    scores = _good(k, record)
    return [1.0 - s for s in scores] if k in (1, 2, 10, 20) else scores


def test_far_apart_runs_get_disjoint_rank_intervals_and_twins_are_tied(tmp_path: Path) -> None:
    runs = [
        _run(tmp_path, "base", display="base"),
        _run(tmp_path, "good", _good, "good"),
        _run(tmp_path, "twin", _good_twin, "twin"),
    ]
    out = tmp_path / "out"
    _, document = compare_many(runs, out, resamples=200, seed=0)
    for task, board in document["leaderboard"].items():
        rows = {row["model"]: row for row in board["models"]}
        assert rows["base"]["interval"] == [3, 3], task
        assert rows["good"]["interval"][1] <= 2 and rows["twin"]["interval"][1] <= 2
        assert sorted(board["groups"][0]) == ["good", "twin"] and board["groups"][1] == ["base"]
        assert rows["good"]["groups"] == rows["twin"]["groups"] == "a" != rows["base"]["groups"]
        assert 0 < board["detectable"]["mde"] < 0.2
    assert (out / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"
    assert not (out / "compare.csv").exists()  # paired A/B tables only for two runs


def _flipped(*flips: int):
    """As :func:`_good`, turned the other way on the datapoints ``flips`` as well."""

    def change(k: int, record: dict) -> list[float]:
        scores = _good(k, record)
        return [1.0 - s for s in scores] if k in flips else scores

    return change


def test_runs_in_one_tied_group_have_no_sure_first(tmp_path: Path, capsys) -> None:
    runs = [_run(tmp_path, "good", _good, "good")] + [
        _run(tmp_path, f"near{k}", _flipped(1 + k, 41 + 2 * k), f"near{k}") for k in range(3)
    ]
    for kind in ("simultaneous", "marginal"):
        _, document = compare_many(runs, None, resamples=100, seed=0, rank_set=kind)
        for board in document["leaderboard"].values():
            assert board["rank_set"] == kind and len(board["groups"]) == 1
            assert len(board["best"]) == 4
            assert all(row["interval"] != [1, 1] for row in board["models"])
    assert compare_main([*map(str, runs), "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"\| 1 \| 1 \| (yes|no) \|", out)  # no rank set [1, 1]
    assert "## Leaderboard with simultaneous rank sets" in out


def _dataset(tmp_path: Path, predicate) -> Path:
    """A dataset folder with the recorded run's ids and labels, AP's rows with
    ``predicate(index)`` (what ``--cluster predicate`` reads; None: no such column)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [json.loads(line) for line in (RUN / "scores.jsonl").read_text().splitlines()]
    for task in dict.fromkeys(r["task"] for r in records):
        rows = [r for r in records if r["task"] == task]
        columns = {"id": [r["id"] for r in rows], "labels": [r["labels"] for r in rows]}
        if task == "active_passive" and predicate is not None:
            columns["predicate"] = [predicate(k) for k in range(len(rows))]
        (tmp_path / "data" / "data" / task).mkdir(parents=True)
        pq.write_table(pa.table(columns), tmp_path / "data" / "data" / task / "test-0.parquet")
    return tmp_path / "data"


@pytest.mark.slow
def test_a_cluster_bootstrap_by_predicate_widens_the_ap_intervals(tmp_path: Path) -> None:
    """A run right on the datapoints of some predicates and wrong on those of the others: its
    datapoints are not independent evidence, and drawing whole predicates widens its AP
    interval. Tasks without a predicate resample datapoints as before."""
    data = _dataset(tmp_path, lambda k: f"verb{k % 40}")

    def by_predicate(k: int, record: dict) -> list[float]:
        right = [float(y) for y in record["labels"]]
        return right if record["task"] != "active_passive" or k % 40 < 20 else right[::-1]

    runs = [_run(tmp_path, "base", display="base"), _run(tmp_path, "topic", by_predicate, "topic")]
    _, plain = compare_many(runs, None, resamples=200, seed=0)
    report, clustered = compare_many(
        runs, None, resamples=200, seed=0, cluster="predicate", data=str(data)
    )
    boards = {"plain": plain["leaderboard"], "cluster": clustered["leaderboard"]}
    assert boards["cluster"]["active_passive"]["clustered"]
    assert not boards["plain"]["active_passive"]["clustered"]
    assert not boards["cluster"]["coordination"]["clustered"]  # no predicate: datapoints
    assert boards["cluster"]["coordination"] == boards["plain"]["coordination"]
    width = {
        name: {
            row["model"]: row["ci"][1] - row["ci"][0] for row in board["active_passive"]["models"]
        }
        for name, board in boards.items()
    }
    assert width["cluster"]["topic"] > 1.2 * width["plain"]["topic"]
    methods = {row["rank_method"] for row in boards["cluster"]["active_passive"]["models"]}
    assert methods == {"cluster sign flip"}
    assert "random sign flips of whole clusters of datapoints" in report
    # the simulated power holds for permutations within datapoints: CO and RC, not clustered AP
    assert report.count("power: a run ahead of each of the other 1 by ") == 2
    assert "- AP: power:" not in report and "- CO: power:" in report
    refused_data = _dataset(tmp_path / "few", lambda k: f"verb{k % 5}")
    with pytest.raises(ValueError, match="at least 6 clusters"):
        compare_many(runs, None, resamples=50, cluster="predicate", data=str(refused_data))


@pytest.mark.parametrize(
    ("predicate", "problem"),
    [
        (lambda k: "" if k == 7 else f"verb{k % 40}", "active_passive/ap-0007 has predicate empty"),
        (
            lambda k: None if k == 7 else f"verb{k % 40}",
            "active_passive/ap-0007 has predicate null",
        ),
        (lambda k: k % 40, "active_passive/ap-0000 has predicate 0 (int, not text)"),
        (None, "no task of "),
    ],
    ids=["empty", "null", "integer", "missing column"],
)
def test_cluster_by_predicate_refuses_what_it_cannot_cluster(
    tmp_path: Path, capsys, predicate, problem: str
) -> None:
    """A predicate empty, null or not text, or no predicate column at all: one line naming the
    run, the datapoint and the problem (exit 2), never a leaderboard silently unclustered."""
    data = _dataset(tmp_path, predicate)
    runs = [str(_run(tmp_path, "base")), str(_run(tmp_path, "good", _good))]
    code = compare_main([*runs, "--resamples", "20", "--cluster", "predicate", "--data", str(data)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("bla-eval compare: error: --cluster predicate: ")
    assert problem in captured.err and str(tmp_path / "base") in captured.err


@pytest.mark.slow
def test_table_formats_have_one_number_per_cell(tmp_path: Path, capsys) -> None:
    runs = [str(RUN), str(_run(tmp_path, "good", _good, "good"))]
    number = re.compile(r"^-?\d+(\.\d+)?$")
    for fmt in ("csv", "markdown", "latex"):
        assert compare_main([*runs, "--resamples", "50", "--table-format", fmt]) == 0
        text = capsys.readouterr().out
        if fmt == "csv":
            blocks = [b for b in text.split("\n\n") if b.strip()]
            rows = list(csv.reader(io.StringIO(blocks[-1].split("\n", 1)[1])))
            cells = [c for row in rows[1:] for c in row[2:8]]
        elif fmt == "markdown":
            lines = [line for line in text.splitlines() if line.startswith("| AP |")]
            cells = [c.strip() for line in lines for c in line.strip("|").split("|")[3:8]]
        else:
            lines = [line for line in text.splitlines() if line.startswith("AP &")]
            cells = [c.strip(" \\") for line in lines for c in line.split("&")[3:8]]
        assert cells and all(number.match(c) for c in cells), (fmt, cells[:10])


def test_compare_refuses_one_run_and_runs_on_other_datapoints(tmp_path: Path, capsys) -> None:
    other = _run(tmp_path, "other")
    lines = (other / "scores.jsonl").read_text().splitlines(keepends=True)
    (other / "scores.jsonl").write_text("".join(lines).replace("ap-0007", "ap-9999"))
    code = compare_main(
        [str(RUN), str(_run(tmp_path, "same")), str(other), "--output", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("bla-eval compare: error: the runs scored different datapoints of ")
    assert not (tmp_path / "o").exists()
    try:
        compare_main([str(RUN)])
    except SystemExit as stop:
        assert stop.code == 2
    err = capsys.readouterr().err
    assert err == "bla-eval compare: error: compare needs at least two runs, got 1\n"


def test_the_leaderboard_ranks_by_set_accuracy_when_asked(tmp_path: Path, capsys) -> None:
    runs = [_run(tmp_path, "base", display="base"), _run(tmp_path, "good", _good, "good")]
    results = {r.name: json.loads((r / "results.json").read_text())["tasks"] for r in runs}
    _, document = compare_many(runs, None, resamples=100, seed=0, metric="set_accuracy")
    for task, board in document["leaderboard"].items():
        assert board["metric"] == "set_accuracy"
        for row in board["models"]:
            assert row["value"] == results[row["model"]][task]["ranking"]["set_accuracy"]
            # one interval per number: the exact one results.json and the report give
            n = results[row["model"]][task]["n"]
            exact = formulas.share_interval(round(row["value"] * n), n)
            assert row["ci"] == exact
            stored = {"tasks": results[row["model"]], "confidence_intervals": {"tasks": {}}}
            stored["confidence_intervals"]["tasks"][task] = {"ranking": {"set_accuracy": [0, 0]}}
            assert run_interval(stored, task, "ranking", "set_accuracy") == exact
        assert [row["model"] for row in board["models"]] == ["good", "base"]
    assert compare_main([*map(str, runs), "--resamples", "50", "--metric", "set_accuracy"]) == 0
    assert "## Leaderboard with simultaneous rank sets (set accuracy)" in capsys.readouterr().out
    assert compare_main([*map(str, runs), "--metric", "set_error"]) == 2
    err = capsys.readouterr().err
    expected = "--metric 'set_error': a BLA leaderboard ranks by sentence_accuracy, set_accuracy"
    assert err.count("\n") == 1 and expected in err


@pytest.mark.parametrize(
    ("runs", "n", "design"),
    [
        (2, 50, "simulated for 2 runs on 30 datapoints, the design nearest to these 2 runs on 50 "),
        (3, 100, "simulated for 3 runs on 100 datapoints;"),
        (5, 700, "simulated for 6 runs on 600 datapoints, the design nearest to these 5 runs on "),
    ],
)
def test_the_power_line_names_the_simulated_design_and_the_tables_n(runs, n, design) -> None:
    """The standardised lead comes from the simulated design nearest on the safe side; the line
    says which, and that the lead is scaled by the table's own n."""
    from bla_eval.analysis.leaderboard import power_line

    board = {
        "models": [{"model": f"m{k}"} for k in range(runs)],
        "n": n,
        "power": {"lead": 0.1, "lambda": 3.0, "sd": 0.2},
    }
    line = power_line(board)
    assert f"√n with n = {n}, {design}" in line
