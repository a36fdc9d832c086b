"""``bla-finetune`` without ``--data`` trains on bla-eval's default data: a build in
``./bla_dataset`` of the working directory (or ``$BLA_DATASET``)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from bla_eval.finetune.cli import main as bla_finetune


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
