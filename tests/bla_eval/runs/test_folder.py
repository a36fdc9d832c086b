"""``RunFolder``: opening a finished run, the lock, the marker, run.json, the parts of processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bla_eval.benchmarks import get_benchmark
from bla_eval.outputs import OWNER_FILE
from bla_eval.runs import RESULTS_FILE, RUN_FILE, SCORES_FILE, RunFolder
from bla_eval.runs.files import LOCK_FILE

TYPES = ["True1", "True2", "False1", "False2"]
RECORDS = [
    {
        "task": "coordination",
        "id": f"co-{i}",
        "scores": [0.9 - i / 10, 0.5, 0.4 + i / 10, 0.1],
        "labels": [1, 1, 0, 0],
        "caption_types": TYPES,
    }
    for i in range(3)
]


def finished(path: Path, records: list[dict] = RECORDS) -> RunFolder:
    """A finished run folder whose results.json follows from its records."""
    folder = RunFolder(path)
    path.mkdir()
    folder.start({"model": "m", "kind": "contrastive", "data": "d"})
    folder.scores_path.write_text("".join(json.dumps(r) + "\n" for r in records))
    task = get_benchmark("bla").summarise(records, False)
    folder.write_results({"benchmark": "bla", "model": "m", "tasks": {"coordination": task}})
    return folder


def test_a_finished_run_opens_with_its_records(tmp_path):
    run = RunFolder.open(finished(tmp_path / "run").path)
    assert run.path == tmp_path / "run" and run.records == {"coordination": RECORDS}
    assert run.protocol == "zero-shot" and run.benchmark == "bla" and not run.probabilistic
    assert json.loads((tmp_path / "run" / OWNER_FILE).read_text()) == {
        "command": "bla-eval",
        "files": [RUN_FILE, SCORES_FILE, RESULTS_FILE],
    }


def test_open_refuses_a_run_whose_results_do_not_follow_from_its_scores(tmp_path):
    folder = finished(tmp_path / "run")
    results = folder.read_results()
    results["tasks"]["coordination"]["ranking"]["sentence_accuracy"] = 1.0
    folder.write_results(results)
    with pytest.raises(ValueError, match=r"disagrees with .*ranking.sentence_accuracy is 1.0"):
        RunFolder.open(folder.path)
    with pytest.raises(FileNotFoundError, match="run folder not found"):
        RunFolder.open(tmp_path / "absent")
    folder.results_path.unlink()
    with pytest.raises(FileNotFoundError, match="has no results.json: not a finished"):
        RunFolder.open(folder.path)


def test_the_lock_stops_a_second_holder(tmp_path):
    folder = RunFolder(tmp_path)
    with folder.lock():
        assert (tmp_path / LOCK_FILE).read_text().split() == [str(os.getpid()), os.uname().nodename]
        in_use = rf"{tmp_path} is in use by another bla-eval run"
        with pytest.raises(ValueError, match=in_use), folder.lock():
            pass
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_folder_the_run_created_goes_when_it_fails_before_a_score(tmp_path):
    folder = RunFolder(tmp_path / "new")
    with pytest.raises(RuntimeError), folder.created():
        folder.start({"model": "m"})
        folder.scores_path.touch()
        raise RuntimeError("model failed to load")
    assert not folder.path.exists()
    with pytest.raises(RuntimeError), folder.created():
        folder.scores_path.write_text(json.dumps(RECORDS[0]) + "\n")
        raise RuntimeError("killed after a score")
    assert folder.scores_path.exists()


def test_the_output_is_new_empty_or_a_run_folder(tmp_path):
    assert RunFolder(tmp_path / "absent").check_output() == tmp_path / "absent"
    mine = tmp_path / "mine"
    mine.mkdir()
    RunFolder(mine).check_output()  # empty
    (mine / "thesis.tex").write_text("mine")
    with pytest.raises(FileExistsError, match="is not empty and is not a bla-eval run folder"):
        RunFolder(mine).check_output()
    older = tmp_path / "older"  # a run.json with the keys of a run, but no marker: not ours
    older.mkdir()
    (older / RUN_FILE).write_text(json.dumps({"model": "m", "kind": "k", "data": "d"}))
    assert not RunFolder(older).is_run_folder() and not RunFolder(mine).is_run_folder()
    with pytest.raises(FileExistsError, match="is not a bla-eval run folder"):
        RunFolder(older).check_output()
    assert RunFolder(finished(tmp_path / "run").path).is_run_folder()


def test_check_resume_compares_run_json(tmp_path):
    folder = finished(tmp_path / "run")
    settings = {"model": "m", "kind": "contrastive", "data": "d"}
    folder.check_resume(settings, resume=True)
    with pytest.raises(ValueError, match=r"settings changed \(model: 'm' -> 'n'\)"):
        folder.check_resume({**settings, "model": "n"}, resume=True)
    with pytest.raises(FileExistsError, match="of a finished run: continue it with --resume"):
        folder.check_resume({**settings, "model": "n"}, resume=False)  # finished: kept too
    folder.check_resume({**settings, "model": "n"}, resume=False, overwrite=True)
    folder.results_path.unlink()  # a stopped run: its scores are kept
    with pytest.raises(FileExistsError, match="continue it with --resume, or give a new --"):
        folder.check_resume({**settings, "model": "n"}, resume=False)
    folder.check_resume({**settings, "model": "n"}, resume=False, overwrite=True)  # no check
    folder.settings_path.unlink()
    with pytest.raises(ValueError, match=f"cannot resume {folder.path}: it has scores.jsonl but"):
        folder.check_resume(settings, resume=True)


def test_start_records_the_settings_and_removes_the_results(tmp_path):
    folder = finished(tmp_path / "run")
    folder.start({"model": "other"})
    assert json.loads(folder.settings_path.read_text()) == {"model": "other"}
    assert not folder.results_path.exists() and folder.scores_path.exists()


def test_each_process_appends_to_its_part_and_the_parts_merge_in_order(tmp_path):
    folder = RunFolder(tmp_path)
    folder.mark(2)  # the marker lists the parts of the run's two processes
    records = [{"task": "t", "id": str(i), "scores": [i]} for i in range(3)]
    for rank, record in zip((1, 0, 1), records, strict=True):
        with folder.part_path(rank, 2).open("a") as part:
            part.write(json.dumps(record) + "\n")
    assert [p.name for p in folder.part_files()] == [
        "scores.part-0-of-2.jsonl",
        "scores.part-1-of-2.jsonl",
    ]
    store = folder.score_store(resume=True, part=(0, 2))
    store.close()
    assert store.path == folder.part_path(0, 2) and set(store.records) == {("t", "1")}
    assert folder.merge_parts([("t", "2"), ("t", "0")]) == 3  # ("t", "1") kept at the end
    assert [json.loads(line)["id"] for line in folder.scores_path.read_text().splitlines()] == [
        "2",
        "0",
        "1",
    ]
    assert folder.part_files() == [] and set(folder.merged_records()) == {
        ("t", "0"),
        ("t", "1"),
        ("t", "2"),
    }
