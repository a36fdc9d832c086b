"""The consistency rule of a run folder's records, and the protocol a results document records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import SCORES_FILE, protocol_name
from bla_eval.runs.check import check_records, first_difference, is_probabilistic, scores_path

from tests.bla_eval.commands import copy_run, duplicated, lines_of, refused, tampered, write_lines

pytestmark = pytest.mark.usefixtures("one_thread")

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


def _foreign_task(run: Path) -> None:
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "task": "relative_clause"}])


def _half_written(run: Path) -> None:
    """The last line cut in the middle (a crash, a full disk, a careless copy)."""
    data = (run / SCORES_FILE).read_bytes().rstrip(b"\n")
    last = data.rsplit(b"\n", 1)[-1]
    (run / SCORES_FILE).write_bytes(data[: -(len(last) // 2)])


def _not_utf8(run: Path) -> None:
    with (run / SCORES_FILE).open("ab") as handle:
        handle.write(b'{"task": "coordination", "id": "\xff\xfe"}\n')


CORRUPTIONS = {
    "results.json disagrees with the scores": (tampered, ["disagrees with", SCORES_FILE]),
    "a repeated id with other scores": (duplicated, ["line 4", "again (first on line 1)"]),
    "a record of a task the run does not hold": (_foreign_task, ["line 4", "'relative_clause'"]),
    "a half-written last line": (_half_written, ["counts 3 datapoints", "holds 2", SCORES_FILE]),
    "a line that is not UTF-8": (_not_utf8, [SCORES_FILE, "line 4 is not UTF-8"]),
}


def _analyze(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["analyze", run, "--data", data, "--output", tmp_path / "analysis"]


def _compare_a(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["compare", run, clean, "--resamples", "20"]


def _compare_b(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["compare", clean, run, "--resamples", "20"]


def _export(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["export", run, "--output", tmp_path / "export"]


def _learning_report(run: Path, clean: Path, data: Path, tmp_path: Path) -> tuple[Callable, list]:
    return bla_eval, ["learning-report", run]


READERS = {
    "analyze": _analyze,
    "compare (A)": _compare_a,
    "compare (B)": _compare_b,
    "export": _export,
    "learning-report": _learning_report,
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("reader", list(READERS))
def test_readers_refuse_a_run_whose_results_do_not_follow_from_its_scores(
    reader, corruption, co_run, learning_run, built_dataset, tmp_path, capsys
):
    base = learning_run if reader == "learning-report" else co_run
    edit, fragments = CORRUPTIONS[corruption]
    run, clean = copy_run(base, tmp_path, "bad"), copy_run(base, tmp_path, "clean")
    edit(run)
    main, argv = READERS[reader](run, clean, built_dataset, tmp_path)
    refused(main, argv, capsys, *fragments)
    assert not (tmp_path / "analysis").exists() and not (tmp_path / "export").exists()


def test_a_binary_view_that_does_not_follow_from_the_scores_is_refused(tmp_path):
    from bla_eval.runs.check import check_binary_view

    results = tmp_path / "results.json"
    ranker = {"coordination": [{"id": "1", "scores": [24.5, 20.1, 19.0, 18.2]}]}
    probabilities = {"coordination": [{"id": "1", "scores": [[0.9, 0.2], [0.4, 1.0]]}]}
    check_binary_view(results, PATH, {"protocol": {"binary_view": "top-k"}}, ranker)
    check_binary_view(results, PATH, {"protocol": {"binary_view": "threshold 0.5"}}, probabilities)
    check_binary_view(results, PATH, {"protocol": "zero-shot"}, ranker)  # older runs record none
    forged = {"protocol": {"binary_view": "threshold 0.5"}}
    with pytest.raises(ValueError, match=r"holds a score of 24.5 \(not a probability\) for co"):
        check_binary_view(results, PATH, forged, ranker)
    with pytest.raises(ValueError, match="binary_view is 'majority'; expected one of"):
        check_binary_view(results, PATH, {"protocol": {"binary_view": "majority"}}, ranker)


def test_the_protocol_record_of_every_shape():
    from bla_eval.runs.check import check_protocol, protocol_record

    assert protocol_record({"protocol": "paper"}) == {"name": "paper"}
    assert protocol_record({}) == {} == protocol_record({"protocol": ["a"]})
    check_protocol(PATH, {"protocol": "paper"})  # older runs record the name alone
    for bad, shown in ((["zero-shot"], "a list"), (7, "not 7"), ({"name": 3}, "name must")):
        with pytest.raises(ValueError, match=shown):
            check_protocol(PATH, {"protocol": bad})


@pytest.mark.parametrize(
    ("protocol", "fragment"),
    [("zero-shot", None), (["zero-shot"], "protocol must be an object"), (True, "not True")],
)
def test_compare_of_a_run_whose_protocol_is_a_string_or_a_list(
    protocol, fragment, co_run, tmp_path, capsys
):
    import json

    run, clean = copy_run(co_run, tmp_path, "edited"), copy_run(co_run, tmp_path, "clean")
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    results["protocol"] = protocol
    (run / "results.json").write_text(json.dumps(results), encoding="utf-8")
    argv = ["compare", run, clean, "--resamples", "20"]
    if fragment is None:
        assert bla_eval([str(a) for a in argv]) == 0
    else:
        refused(bla_eval, argv, capsys, str(run / "results.json"), fragment)
