"""Resuming a run (``--resume``): what a resume must match (``run.json``, the records of
``scores.jsonl``), what it refuses before it changes anything, and that a resumed run equals one
never stopped. A run setting declared in ``RunConfig`` alone is recorded and checked. Runs are
scored by the tiny random CLIP on the built dataset. (The parts of a multi-process run and the
endpoint's response cache resume in ``tests/bla_eval/test_distributed.py`` and
``tests/bla_eval/scorers/test_openai_api.py``.)"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.config import RunConfig, option
from bla_eval.outputs import OWNER_FILE
from bla_eval.run import evaluate
from bla_eval.runs import RUN_FILE, SCORES_FILE, RunFolder

from tests.bla_eval.commands import (
    call,
    copy_run,
    eval_args,
    killed_mid_run,
    lines_of,
    refused,
    snapshot,
    write_lines,
)

pytestmark = pytest.mark.usefixtures("one_thread")

LIMIT = 3


@pytest.fixture(scope="module")
def co_run(tiny_clip, built_dataset, tmp_path_factory) -> Path:
    """A finished run: CO, the first 3 datapoints."""
    out = tmp_path_factory.mktemp("co") / "run"
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", LIMIT)
    assert bla_eval(argv) == 0
    return out


@pytest.fixture(scope="module")
def clip_run(tiny_clip: Path, built_dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    """An uninterrupted run on the first 6 datapoints of each task."""
    out = tmp_path_factory.mktemp("clip_run")
    config = RunConfig(
        str(tiny_clip), out, data=str(built_dataset), limit=6, batch_size=4, images_per_batch=4
    )
    return out, evaluate(config), config


# ----------------------------------------------------------------------------- what a resume keeps
def test_resume_after_a_crash_gives_the_same_results(clip_run, tiny_clip, built_dataset, tmp_path):
    out, results, config = clip_run
    shutil.copy(out / "run.json", tmp_path / "run.json")
    shutil.copy(out / OWNER_FILE, tmp_path / OWNER_FILE)  # the marker: the folder is a run
    lines = (out / SCORES_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    # a crash after 7 datapoints, in the middle of writing the 8th line
    (tmp_path / SCORES_FILE).write_text("".join(lines[:7]) + lines[7][:25], encoding="utf-8")
    resumed = evaluate(config.with_(output_dir=tmp_path, resume=True))
    assert resumed["timings"]["datapoints_resumed"] == 7
    assert resumed["timings"]["datapoints_scored"] == 11
    assert resumed["tasks"] == results["tasks"]
    before = {(r["task"], r["id"]): r for r in lines_of(out / SCORES_FILE)}
    after = {(r["task"], r["id"]): r for r in lines_of(tmp_path / SCORES_FILE)}
    assert after.keys() == before.keys()
    for key, record in after.items():
        assert record["scores"] == pytest.approx(before[key]["scores"], abs=1e-6)
        assert record["labels"] == before[key]["labels"]


def test_resume_refuses_changed_settings(clip_run, tiny_clip, built_dataset, tmp_path):
    out, _, config = clip_run
    shutil.copytree(out, tmp_path / "run")
    with pytest.raises(ValueError, match="similarity"):
        evaluate(config.with_(output_dir=tmp_path / "run", resume=True, similarity="clipscore"))


def test_with_overwrite_a_new_run_starts_fresh(clip_run, tiny_clip, built_dataset, tmp_path):
    out, _, config = clip_run
    shutil.copytree(out, tmp_path / "run")
    again = evaluate(
        config.with_(output_dir=tmp_path / "run", tasks=("ap",), limit=2, overwrite=True)
    )
    assert again["timings"]["datapoints_scored"] == 2
    assert len(lines_of(tmp_path / "run" / SCORES_FILE)) == 2


def test_resume_without_run_json_is_refused(co_run, tiny_clip, built_dataset, tmp_path):
    out = copy_run(co_run, tmp_path)
    (out / RUN_FILE).unlink()
    config = RunConfig(str(tiny_clip), out, data=str(built_dataset), tasks=("co",), limit=LIMIT)
    with pytest.raises(ValueError, match="no run.json.*--overwrite or a new --output"):
        evaluate(config.with_(resume=True, similarity="clipscore"))
    assert json.loads((out / SCORES_FILE).read_text().splitlines()[0])["task"] == "coordination"


def test_a_stopped_run_rerun_without_resume_is_refused_and_keeps_its_scores(
    tiny_clip, built_dataset, tmp_path, capsys
):
    """Ctrl-C, up-arrow, Enter: the rerun names --resume and a new --output, and
    scores.jsonl keeps every line; the interrupt message names --resume."""
    out = tmp_path / "run"
    config = RunConfig(
        str(tiny_clip),
        out,
        data=str(built_dataset),
        tasks=("co",),
        limit=6,
        batch_size=2,
        images_per_batch=2,
    )

    def stop(done: int, total: int, desc: str) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt, match="--resume"):
        evaluate(config, progress=stop)
    kept = (out / SCORES_FILE).read_bytes()
    assert kept.count(b"\n") >= 1
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", "6")
    refused(bla_eval, argv, capsys, "scored datapoints of a stopped run", "--resume", "--output")
    assert (out / SCORES_FILE).read_bytes() == kept
    assert evaluate(config.with_(resume=True))["tasks"]["coordination"]["n"] == 6


def test_a_finished_run_rerun_without_resume_is_refused_and_keeps_everything(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    """One up-arrow in the shell: a finished run rerun without --resume names --resume,
    --overwrite and a new --output, and every file of the run stays as it was."""
    out = copy_run(co_run, tmp_path)
    before = snapshot(out)
    argv = eval_args(tiny_clip, built_dataset, out, "--tasks", "co", "--limit", LIMIT)
    refused(
        bla_eval, argv, capsys, f"{LIMIT} scored datapoints of a finished run", "--resume",
        "--overwrite", "--output",
    )  # fmt: skip
    assert snapshot(out) == before
    assert call(bla_eval, [*argv, "--resume"], capsys)[0] == 0 and snapshot(out) == before


# ----------------------------------------------------------------------------- a new run setting
@dataclass(frozen=True)
class SmoothedConfig(RunConfig):
    """``RunConfig`` with one more setting that decides the scores, declared here alone."""

    smoothing: int = option(0, "a setting that changes the scores", resume=True)


def test_a_run_setting_declared_in_run_config_alone_is_recorded_and_checked(
    tiny_clip, built_dataset, tmp_path
):
    out = tmp_path / "run"
    config = SmoothedConfig(
        str(tiny_clip), out, data=str(built_dataset), tasks=("co",), limit=2, smoothing=3
    )
    evaluate(config)
    assert json.loads((out / RUN_FILE).read_text(encoding="utf-8"))["smoothing"] == 3
    before = snapshot(out)
    with pytest.raises(ValueError, match=rf"cannot resume {out}: .*\(smoothing: 3 -> 4\)$"):
        evaluate(config.with_(resume=True, smoothing=4))
    assert snapshot(out) == before
    resumed = evaluate(config.with_(resume=True))  # a finished run: its record is kept
    assert resumed == json.loads(before["results.json"]) and snapshot(out) == before


# ----------------------------------------------------------------------------- refusals
def _older_run_json(run: Path) -> None:
    """run.json as runs before this version wrote it (no benchmark, tasks, limit, protocol)."""
    settings = json.loads((run / RUN_FILE).read_text())
    for key in ("benchmark", "tasks", "limit", "protocol"):
        settings.pop(key)
    (run / RUN_FILE).write_text(json.dumps(settings))


def _icl_sd_run_json(run: Path) -> None:
    """The run.json an icl-sd run leaves (its settings, as the engine records them)."""
    settings = json.loads((run / RUN_FILE).read_text())
    settings |= {"protocol": "icl-sd", "icl_order": "true-first", "icl_seed": 0}
    (run / RUN_FILE).write_text(json.dumps(settings))


def _foreign_id(run: Path) -> None:
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "id": "co-9999"}])


def _repeated_id(run: Path) -> None:
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "scores": [9.0, 8.0, 0.0, 0.0]}])


RESUMES = {
    "smaller --limit": (None, ["--limit", "2"], ["limit: 3 -> 2"]),
    "other --tasks": (None, ["--tasks", "ap"], ["tasks: ['coordination'] -> ['active_passive']"]),
    "--protocol zero-shot on an icl-sd run": (
        _icl_sd_run_json,
        [],
        ["protocol: 'icl-sd' -> 'zero-shot'"],
    ),
    "a record of a foreign id": (
        _foreign_id,
        [],
        [f"{SCORES_FILE}: line 4 scores coordination datapoint 'co-9999'", "do not select"],
    ),
    "a repeated id with other scores": (
        _repeated_id,
        [],
        [f"{SCORES_FILE}: line 4 scores coordination datapoint", "again (first on line 1)"],
    ),
    "an older run.json and a smaller --limit": (
        _older_run_json,
        ["--limit", "2"],
        [f"{SCORES_FILE}: line 3 scores coordination datapoint", "do not select"],
    ),
}


@pytest.mark.parametrize("case", list(RESUMES))
def test_a_resume_that_would_mix_datapoints_is_refused_and_changes_nothing(
    case, co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    edit, extra, fragments = RESUMES[case]
    run = copy_run(co_run, tmp_path)
    if edit is not None:
        edit(run)
    before = snapshot(run)
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT, *extra)
    refused(bla_eval, [*argv, "--resume"], capsys, f"cannot resume {run}", *fragments)
    assert snapshot(run) == before


def test_a_resume_with_the_same_settings_completes_the_run(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, records[:1])  # an interrupted run: one datapoint scored
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT, "--resume")
    assert call(bla_eval, argv, capsys)[0] == 0
    assert len(RunFolder.open(run).records["coordination"]) == LIMIT


def test_a_finished_run_resumed_keeps_its_record(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    path = run / "results.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    recorded["timings"]["scoring_s"] = 4260.0  # a long run's clock, not measured again
    path.write_text(json.dumps(recorded), encoding="utf-8")
    argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT, "--resume")
    assert call(bla_eval, argv, capsys)[0] == 0
    assert json.loads(path.read_text(encoding="utf-8")) == recorded
    write_lines(run / SCORES_FILE, lines_of(run / SCORES_FILE)[:1])  # two datapoints left
    assert call(bla_eval, argv, capsys)[0] == 0
    assert json.loads(path.read_text(encoding="utf-8"))["timings"]["datapoints_scored"] == 2


# ----------------------------------------------------------------------------- a killed process
@pytest.mark.slow
def test_a_killed_run_resumed_equals_an_uninterrupted_one(tiny_clip, built_dataset, tmp_path):
    """SIGKILL a real ``bla-eval`` process mid-run, resume it, compare with a run never stopped."""
    argv = ["--model", str(tiny_clip), "--data", str(built_dataset), "--limit", "100"]
    argv += ["--batch-size", "1"]  # the same batches in all three runs, and many small appends
    killed = tmp_path / "killed"
    written = killed_mid_run(argv, killed, 20)
    assert not (killed / "results.json").exists()
    assert 20 <= written < 300

    assert bla_eval([*argv, "--output", str(killed), "--resume"]) == 0
    assert bla_eval([*argv, "--output", str(tmp_path / "whole")]) == 0
    resumed = json.loads((killed / "results.json").read_text(encoding="utf-8"))
    whole = json.loads((tmp_path / "whole" / "results.json").read_text(encoding="utf-8"))
    assert resumed["timings"]["datapoints_resumed"] >= 20
    assert resumed["timings"]["datapoints_scored"] == 300 - resumed["timings"]["datapoints_resumed"]
    assert resumed["tasks"] == whole["tasks"]
