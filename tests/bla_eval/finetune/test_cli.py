"""``bla-finetune`` without ``--data`` trains on bla-eval's default data: a build in
``./bla_dataset`` of the working directory (or ``$BLA_DATASET``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from bla_eval.finetune.cli import main as bla_finetune
from bla_eval.outputs import OWNER_FILE, TEMP_MARKER

from tests.bla_eval.commands import call, finetune_args, refused, snapshot, user_folder

pytestmark = pytest.mark.usefixtures("one_thread")


def test_without_data_it_uses_the_build_in_the_working_directory(
    tiny_clip: Path, built_dataset: Path, tmp_path: Path, monkeypatch, capsys
):
    monkeypatch.delenv("BLA_DATASET", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bla_dataset").symlink_to(built_dataset, target_is_directory=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared machine: one thread is faster
    try:
        argv = ["--model", str(tiny_clip), "--task", "ap", "--output", "out", "--epochs", "1"]
        code = bla_finetune([*argv, "--limit", "2", "--eval-tasks", "ap", "--device", "cpu"])
    finally:
        torch.set_num_threads(threads)
    assert code == 0, capsys.readouterr().err
    document = json.loads((tmp_path / "out" / "finetune.json").read_text(encoding="utf-8"))
    assert document["settings"]["data"] is None
    assert document["runs"][0]["finetuned"]["active_passive_learning"]["all"]["n"] == 2


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["", "--overwrite"])
def test_bla_finetune_never_replaces_what_it_did_not_write(
    overwrite, tiny_clip, built_dataset, tmp_path, capsys, monkeypatch
):
    mine = user_folder(tmp_path / "mine")
    before = snapshot(tmp_path)
    argv = finetune_args(tiny_clip, built_dataset, mine, *overwrite)
    refused(bla_finetune, argv, capsys, "thesis.tex")
    monkeypatch.chdir(mine)
    argv = finetune_args(tiny_clip, built_dataset, ".", *overwrite)
    refused(bla_finetune, argv, capsys, "is the working directory or holds it")
    assert snapshot(tmp_path) == before


def test_two_bla_finetune_runs_never_share_an_output(tiny_clip, built_dataset, tmp_path, capsys):
    """A second bla-finetune into the output another one is writing stops at once (its lock
    beside the output names the process), and writes nothing."""
    code = (
        "import sys, time\nfrom bla_eval.locking import output_lock\n"
        "with output_lock(sys.argv[1], 'bla-finetune'):\n"
        "    print('locked', flush=True)\n    time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "tuned")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        lock = tmp_path / ".tuned.bla-finetune.lock"
        argv = finetune_args(tiny_clip, built_dataset, tmp_path / "tuned")
        refused(bla_finetune, argv, capsys, "in use by another bla-finetune run", str(holder.pid))
        assert sorted(os.listdir(tmp_path)) == [lock.name]
    finally:
        holder.kill()
        holder.wait()


def test_bla_finetune_removes_the_staging_a_killed_run_left_and_writes_its_output(
    tiny_clip, built_dataset, tmp_path, capsys
):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".tuned.bla-staging-{dead.stdout.strip()}"
    (stale / "tuned" / "seed-1").mkdir(parents=True)
    (stale / "tuned" / "seed-1" / "model.safetensors").write_bytes(b"\0" * 1000)
    marker = {"pid": int(dead.stdout), "name": stale.name}  # what the killed run wrote first
    (stale / TEMP_MARKER).write_text(json.dumps(marker))
    (tmp_path / ".tuned.bla-finetune.lock").write_text(f"{dead.stdout.strip()}\n")  # stale lock
    code, err = call(
        bla_finetune, finetune_args(tiny_clip, built_dataset, tmp_path / "tuned"), capsys
    )
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == ["tuned"]
    assert json.loads((tmp_path / "tuned" / OWNER_FILE).read_text())["command"] == "bla-finetune"


def test_a_training_row_without_one_true_and_one_false_sentence_is_named(
    tiny_clip, built_dataset, tmp_path, capsys
):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    (data / "data").mkdir(parents=True)
    for name in ("README.md", "manifest.json"):
        shutil.copy(built_dataset / name, data / name)
    shutil.copytree(
        built_dataset / "data" / "coordination_learning", data / "data" / "coordination_learning"
    )
    path = next((data / "data" / "coordination_learning").glob("train-*.parquet"))
    table = pq.read_table(path)
    labels = table.column("labels").to_pylist()
    first = table.column("id")[0].as_py()
    labels[0] = [0, 0]  # two false sentences
    field = table.schema.field("labels")
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("labels"), field, pa.array(labels, field.type)
        ),
        path,
    )
    argv = finetune_args(tiny_clip, data, tmp_path / "out")
    refused(
        bla_finetune, argv, capsys, "coordination_learning/train", f"record {first!r}", "[0, 0]"
    )
    assert not (tmp_path / "out").exists()
