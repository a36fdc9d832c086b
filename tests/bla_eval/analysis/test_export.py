"""Results on the Hub: the dataset's eval.yaml and the model repo's .eval_results / model-index,
parsed back with huggingface_hub's own parsers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from bla_eval.analysis.cli import export_main
from bla_eval.cli import main as bla_eval
from bla_eval.harnesses.answer_match import answer_accuracy, answer_interval, sentence_matches
from bla_eval.runs import RESULTS_FILE, SCORES_FILE
from huggingface_hub import parse_eval_result_entries
from huggingface_hub.repocard_data import model_index_to_eval_results

from bla_metric.tasks import TASKS
from builders.hub_eval import render_eval_yaml
from tests.bla_eval.commands import call, copy_run, lines_of, refused, write_lines

pytestmark = pytest.mark.usefixtures("one_thread")

RUN = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "runs" / "smollm2"


def test_built_dataset_declares_one_task_per_construction(built_dataset: Path) -> None:
    text = (built_dataset / "eval.yaml").read_text()
    assert text == render_eval_yaml()
    config = yaml.safe_load(text)
    assert set(config) == {"name", "description", "evaluation_framework", "tasks"}
    assert [(t["id"], t["split"]) for t in config["tasks"]] == [
        (t.config, "test") for t in TASKS.values()
    ]
    assert "sentence accuracy" in config["description"]
    manifest = json.loads((built_dataset / "manifest.json").read_text())
    assert "eval.yaml" in manifest["files"]


def answered_run(tmp_path: Path, name: str = "answered") -> Path:
    """A copy of the recorded SmolLM2 run whose records carry generated answers ("Yes." for the
    two best-scored sentences, else "No, it is not."): a whole run with yes/no answers."""
    run = copy_run(RUN, tmp_path, name)
    records = lines_of(run / SCORES_FILE)
    for record in records:
        top = sorted(record["scores"])[-2]
        record["answers"] = ["Yes." if s >= top else "No, it is not." for s in record["scores"]]
    write_lines(run / SCORES_FILE, records)
    return run


def test_eval_results_hold_what_the_hub_task_computes(tmp_path: Path, capsys) -> None:
    run = answered_run(tmp_path)
    assert export_main([str(run), "--output", str(tmp_path)]) == 0
    path = tmp_path / ".eval_results" / "bla.yaml"
    entries = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    results = json.loads((run / "results.json").read_text())
    records = lines_of(run / SCORES_FILE)
    task_ids = {t["id"] for t in yaml.safe_load(render_eval_yaml())["tasks"]}
    assert [e.task_id for e in entries] == list(results["tasks"])
    for entry in entries:
        held = [r for r in records if r["task"] == entry.task_id]
        answers, labels = [r["answers"] for r in held], [r["labels"] for r in held]
        assert entry.task_id in task_ids
        assert entry.dataset_id == "bla-benchmark/bla"
        assert entry.value == round(answer_accuracy(answers, labels), 4)
        assert 0 <= entry.value <= 1
        assert entry.date == results["created"]
        low, high = answer_interval(answers, labels)
        assert f"95% CI [{low:.4f}, {high:.4f}]" in entry.notes
        assert f"n {len(held)} datapoints" in entry.notes
        headline = results["tasks"][entry.task_id]["ranking"]["sentence_accuracy"]
        assert f"BLA headline ranking.sentence_accuracy {headline:.4f} [" in entry.notes
        assert "per-datapoint scores: not published" in entry.notes
        assert "zero-shot" in entry.notes and "kind text" in entry.notes
    assert f"wrote {path}" in capsys.readouterr().out


def test_the_hub_metric_is_inspects_match_at_the_beginning() -> None:
    answers = [["Yes.", " no, it is not", "Maybe", "nothing"], ["YES!", "...No", "yes", "No"]]
    assert sentence_matches(answers, [[1, 0, 1, 0], [1, 0, 0, 1]]) == [[1, 1, 0, 1], [1, 1, 0, 0]]


def test_a_run_without_answers_is_refused_for_the_task_ids(tmp_path: Path, capsys) -> None:
    refused(export_main, [str(RUN), "--output", str(tmp_path)], capsys, "generated none")
    assert not (tmp_path / ".eval_results").exists()


def test_a_partial_run_is_refused_unless_allowed(tmp_path: Path, capsys) -> None:
    run = answered_run(tmp_path)
    results = json.loads((run / RESULTS_FILE).read_text())
    results["protocol"]["limit"] = 654
    (run / RESULTS_FILE).write_text(json.dumps(results))
    argv = [str(run), "--output", str(tmp_path / "out")]
    line = refused(export_main, argv, capsys, "is a partial run (--limit 654 cut coordination, ")
    assert "--allow-partial" in line and not (tmp_path / "out").exists()
    assert export_main([*argv, "--format", "model-index"]) == 2
    assert export_main([*argv, "--allow-partial"]) == 0
    text = (tmp_path / "out" / ".eval_results" / "bla.yaml").read_text()
    entries = parse_eval_result_entries(yaml.safe_load(text))
    assert all("PARTIAL RUN exported with --allow-partial: --limit 654" in e.notes for e in entries)


def test_export_defaults_to_the_run_folder_and_model_index(tmp_path: Path) -> None:
    run = answered_run(tmp_path, "run")
    assert export_main([str(run)]) == 0
    assert (run / ".eval_results" / "bla.yaml").is_file()
    assert export_main([str(run), "--format", "model-index", "--dataset-id", "me/bla"]) == 0
    card = yaml.safe_load((run / "model-index.yaml").read_text())
    name, evals = model_index_to_eval_results(card["model-index"])
    assert name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert {e.dataset_config for e in evals} == set(
        json.loads((run / "results.json").read_text())["tasks"]
    )
    assert all(e.dataset_type == "me/bla" and e.metric_type == "sentence_accuracy" for e in evals)


def test_push_dry_run_prints_the_pull_request_call(tmp_path: Path, capsys) -> None:
    run = answered_run(tmp_path)
    argv = [str(run), "--output", str(tmp_path), "--push", "--repo-id", "me/model", "--dry-run"]
    assert export_main(argv) == 0
    out = capsys.readouterr().out
    assert "HfApi().create_commit(" in out and "repo_id='me/model'" in out
    assert "create_pr=True" in out and "'.eval_results/bla.yaml'" in out
    assert export_main([str(RUN), "--push"]) == 2
    assert "--push needs --repo-id" in capsys.readouterr().err


def test_scores_are_named_in_the_notes_and_pushed_with_the_entry(tmp_path: Path, capsys) -> None:
    run = answered_run(tmp_path)
    argv = [str(run), "--output", str(tmp_path), "--scores", "me/bla-results"]
    assert export_main([*argv, "--push", "--repo-id", "me/model", "--dry-run"]) == 0
    out = capsys.readouterr().out
    folder = "SmolLM2-135M-Instruct.Q4_1.gguf-20261122011248"
    assert f"'{folder}/scores.jsonl'" in out and f"'{folder}/results.json'" in out
    assert "api.create_repo('me/bla-results', repo_type='dataset', exist_ok=True)" in out
    text = (tmp_path / ".eval_results" / "bla.yaml").read_text()
    location = f"per-datapoint scores: hf://datasets/me/bla-results/{folder}/scores.jsonl"
    entries = parse_eval_result_entries(yaml.safe_load(text))
    assert [location in e.notes for e in entries] == [True] * 3
    refused(export_main, [*argv[:-1], "../x"], capsys, "--scores '../x' is not a Hub repo id")


def test_bla_eval_dispatches_the_subcommands(tmp_path: Path, capsys) -> None:
    from bla_eval.cli import main

    assert main(["export", str(RUN), "--output", str(tmp_path), "--format", "model-index"]) == 0
    assert (tmp_path / "model-index.yaml").is_file()
    assert main(["analyze", str(tmp_path / "missing")]) == 2
    assert "bla-eval analyze: error: run folder not found" in capsys.readouterr().err
    assert main(["compare", str(RUN), str(tmp_path / "missing")]) == 2


def test_export_labels_the_protocol_the_run_recorded(tmp_path, capsys):
    """The protocol's name is read with one accessor (``protocol.name``), so an in-context run
    is not labelled zero-shot."""
    run = answered_run(tmp_path)
    results = json.loads((run / RESULTS_FILE).read_text())
    results["protocol"]["name"] = "icl-sd"  # the name an icl-sd run records
    (run / RESULTS_FILE).write_text(json.dumps(results))
    assert call(bla_eval, ["export", run], capsys)[0] == 0
    text = (run / ".eval_results" / "bla.yaml").read_text()
    assert "protocol icl-sd;" in text and "zero-shot" not in text


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("eval-results", ".eval_results/bla.yaml"), ("model-index", "model-index.yaml")],
)
def test_export_replaces_only_a_file_it_wrote(fmt, name, tmp_path, capsys):
    co_run = answered_run(tmp_path)
    out = tmp_path / "repo"
    (out / name).parent.mkdir(parents=True)
    (out / name).write_text("my: own\n", encoding="utf-8")
    argv = ["export", co_run, "--format", fmt, "--output", out]
    refused(bla_eval, argv, capsys, f"{out / name} exists and was not written by `bla-eval export`")
    assert (out / name).read_text() == "my: own\n"
    (out / name).unlink()
    (out / name).symlink_to(tmp_path / "elsewhere.yaml")
    refused(bla_eval, argv, capsys, "is a symbolic link")
    assert not (tmp_path / "elsewhere.yaml").exists()
    (out / name).unlink()
    assert call(bla_eval, argv, capsys)[0] == 0
    assert call(bla_eval, argv, capsys)[0] == 0  # its own file: replaced


def test_export_dry_run_checks_the_repo_id_as_the_real_call(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    co_run = answered_run(tmp_path)
    argv = ["export", co_run, "--output", tmp_path / "out", "--push", "--dry-run"]
    refused(bla_eval, [*argv, "--repo-id", "../../etc/passwd"], capsys, "'../../etc/passwd'")
    refused(bla_eval, [*argv, "--repo-id", "org/a/b"], capsys, "'org/a/b'")
    assert not (tmp_path / "out").exists()
    assert call(bla_eval, [*argv, "--repo-id", "org/model"], capsys)[0] == 0


@pytest.mark.parametrize("created", [123, {"a": 1}, "yesterday"])
def test_a_run_whose_date_is_not_a_date_is_refused(created, tmp_path, capsys) -> None:
    run = answered_run(tmp_path)
    results = json.loads((run / RESULTS_FILE).read_text())
    results["created"] = created
    (run / RESULTS_FILE).write_text(json.dumps(results))
    argv = [str(run), "--output", str(tmp_path / "out")]
    refused(export_main, argv, capsys, "results.json: created must be an ISO-8601 date, not")
    assert not (tmp_path / "out").exists()


def test_a_zero_shot_generative_run_is_exported_as_docs_hub_says(tmp_path: Path, capsys) -> None:
    """Greedy first tokens that are neither yes nor no ("\ufffd" of a random model) count as
    wrong, and the notes say so; docs/hub.md says the same."""
    run = answered_run(tmp_path)
    records = lines_of(run / SCORES_FILE)
    for record in records:
        record["answers"] = ["\ufffd", *record["answers"][1:]]
    write_lines(run / SCORES_FILE, records)
    assert export_main([str(run), "--output", str(tmp_path / "out")]) == 0
    path = tmp_path / "out" / ".eval_results" / "bla.yaml"
    for entry in parse_eval_result_entries(yaml.safe_load(path.read_text())):
        held = [r for r in records if r["task"] == entry.task_id]
        answers, labels = [r["answers"] for r in held], [r["labels"] for r in held]
        assert entry.value == round(answer_accuracy(answers, labels), 4)
        note = f"{len(held)} of {4 * len(held)} answers begin with neither yes nor no"
        assert note in entry.notes and "compares P(yes) with P(no) only" in entry.notes
    hub = (Path(__file__).resolve().parents[3] / "docs" / "hub.md").read_text()
    text = " ".join(hub.split())
    assert "A zero-shot run of a generative model is exported too" in text
    assert "begin with neither yes nor no" in text and "is refused" in text


FULL_DISK = """
set -e
mount -t tmpfs -o size=16k tmpfs "$1"
set +e
"$2" -m bla_eval export "$3" --output "$1"
echo "exit $?"
find "$1" -mindepth 1 | sort
"""


def test_export_on_a_full_disk_writes_neither_file(tmp_path: Path) -> None:
    """On a file system of 16 KiB (a tmpfs in a mount namespace of its own) the record fits and
    ``bla.yaml`` does not: the export fails in one line and leaves neither file."""
    import shutil
    import subprocess
    import sys

    run, out = answered_run(tmp_path), tmp_path / "out"
    out.mkdir()
    unshare = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "-rm"]
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to mount a small tmpfs")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [*unshare, "sh", "-c", FULL_DISK, "sh", str(out), sys.executable, str(run)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    if "mount" in done.stderr and "exit" not in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    lines = done.stderr.strip().splitlines()
    assert done.stdout.splitlines()[0] == "exit 2", done.stdout + done.stderr
    assert len(lines) == 1 and "No space left on device" in lines[0], done.stderr
    assert done.stdout.splitlines()[1:] == []  # nothing left on the full disk
