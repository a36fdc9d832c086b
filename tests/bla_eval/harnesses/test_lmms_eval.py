"""BLA in lmms-eval (its own environment, ``.ci/envs/lmms-eval.txt``): the task folder shipped
with the package, run by lmms-eval's ``llava_hf`` model class on the tiny LLaVA, gives the answers
and metrics of ``bla-eval --protocol paper`` on the same model."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from bla_eval.config import RunConfig
from bla_eval.harnesses.lmms_eval_tasks import FOLDER
from bla_eval.run import evaluate
from bla_eval.runs import SCORES_FILE

from tests.harness_envs import harness_outputs, harness_python, install_project

pytestmark = pytest.mark.slow
LIMIT = 2
"""Datapoints of coordination (lmms-eval's ``--limit``: ``4 * LIMIT`` per-sentence rows)."""


def local_task(folder: Path, data: Path) -> Path:
    """A task that includes the shipped ``bla_coordination`` and reads the built folder."""
    folder.mkdir(parents=True)
    (folder / "bla_coordination_local.yaml").write_text(
        f"include: {FOLDER / 'bla_coordination.yaml'}\n"
        "task: bla_coordination_local\n"
        f"dataset_path: {data}\n",
        encoding="utf-8",
    )
    return folder


def test_lmms_eval_gives_the_paper_protocol_answers_and_metrics(
    tiny_llava, built_dataset, tmp_path
):
    python = harness_python("lmms-eval")
    site = install_project(python, tmp_path / "site-packages")
    tasks = local_task(tmp_path / "tasks", built_dataset)
    out = tmp_path / "lmms"
    command = [str(python), "-m", "lmms_eval", "--model", "llava_hf"]
    command += ["--model_args", f"pretrained={tiny_llava},device=cpu,device_map=cpu,dtype=float32"]
    command += ["--tasks", "bla_coordination_local", "--include_path", str(tasks)]
    command += ["--limit", str(4 * LIMIT), "--batch_size", "1", "--log_samples"]
    command += ["--output_path", str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        PYTHONPATH=str(site),
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        WANDB_MODE="disabled",
    )
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    [samples] = harness_outputs(done, out, "*bla_coordination_local*.jsonl")
    config = RunConfig(
        str(tiny_llava),
        tmp_path / "bla-eval",
        kind="generative",
        protocol="paper",
        data=str(built_dataset),
        tasks=("co",),
        limit=LIMIT,
        batch_size=1,
        device="cpu",
    )
    results = evaluate(config)["tasks"]["coordination"]
    records = [json.loads(line) for line in (tmp_path / "bla-eval" / SCORES_FILE).open()]
    answers = {}
    for line in samples.read_text().splitlines():
        row = json.loads(line)["ranking_sentence_accuracy"]  # what process_results kept
        answers[(row["datapoint_id"], row["position"])] = row["answer"]
    assert len(answers) == 4 * LIMIT
    for record in records:
        for position, answer in enumerate(record["answers"]):
            assert answers[(record["id"], position)] == answer, (record["id"], position)
    [report] = [p for p in out.rglob("*results.json")]
    metrics = json.loads(report.read_text())["results"]["bla_coordination_local"]
    assert metrics["ranking_sentence_accuracy,none"] == pytest.approx(
        results["ranking"]["sentence_accuracy"]
    )
    assert metrics["ranking_set_accuracy,none"] == pytest.approx(results["ranking"]["set_accuracy"])
    assert metrics["binary_accuracy,none"] == pytest.approx(results["binary"]["accuracy"])
    assert metrics["unparsed,none"] == results["unparsed"]
