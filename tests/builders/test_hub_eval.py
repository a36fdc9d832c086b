"""``eval.yaml`` as the Hub and inspect-ai read it; the per-sentence configs its tasks run on."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import datasets
import pytest
import yaml

from bla_metric.schema import DATASET_VERSION, SENTENCE_ROWS, sentence_config, sentence_configs
from bla_metric.tasks import TASKS
from builders.__main__ import main
from builders.hub_eval import EVALUATION_FRAMEWORK, eval_config, render_eval_yaml
from builders.manifest import sha256_file

FRAMEWORKS = Path(__file__).with_name("hub_evaluation_frameworks.txt")
INSPECT_SOLVERS = {"prompt_template", "system_message", "user_message", "chain_of_thought"}
INSPECT_SOLVERS |= {"use_tools", "generate", "self_critique", "multiple_choice"}
INSPECT_SCORERS = {"includes", "match", "pattern", "answer", "exact", "f1", "choice", "math"}
INSPECT_SCORERS |= {"model_graded_qa", "model_graded_fact"}
"""The names inspect-ai 0.3.285 accepts in an eval.yaml task (``HFSolver``, ``HFScorer``)."""


def hub_frameworks() -> set[str]:
    """The Hub's accepted frameworks, from the checked-in copy of its list."""
    lines = FRAMEWORKS.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def check_framework(config: dict) -> None:
    """What the Hub checks at push time: the framework is one of its list."""
    framework = config.get("evaluation_framework")
    if framework not in hub_frameworks():
        raise ValueError(f"evaluation_framework {framework!r} is not one the Hub accepts")


def test_the_framework_is_one_the_hub_accepts() -> None:
    assert EVALUATION_FRAMEWORK == "inspect-ai"
    check_framework(eval_config())
    for refused in ("bla-eval", "lmms-eval", "VLMEvalKit"):
        with pytest.raises(ValueError, match="not one the Hub accepts"):
            check_framework(dict(eval_config(), evaluation_framework=refused))


def test_every_task_is_an_inspect_hf_task_on_its_sentence_config() -> None:
    config = yaml.safe_load(render_eval_yaml())
    assert list(config) == ["name", "description", "evaluation_framework", "tasks"]
    assert [t["id"] for t in config["tasks"]] == [t.config for t in TASKS.values()]
    columns = set(SENTENCE_ROWS.names)
    for task in config["tasks"]:
        assert task["config"] == sentence_config(task["id"]) and task["split"] == "test"
        spec = task["field_spec"]
        assert {spec["input"], spec["target"], spec["input_image"], *spec["metadata"]} <= columns
        assert {s["name"] for s in task["solvers"]} <= INSPECT_SOLVERS
        assert {s["name"] for s in task["scorers"]} <= INSPECT_SCORERS


@pytest.mark.slow
def test_built_sentence_configs_hold_one_row_per_image_and_sentence(built_dataset: Path) -> None:
    manifest = json.loads((built_dataset / "manifest.json").read_text())
    assert (built_dataset / "eval.yaml").read_text() == render_eval_yaml()
    for task in TASKS.values():
        name = sentence_config(task.config)
        test = datasets.load_dataset(str(built_dataset), task.config, split="test")
        rows = datasets.load_dataset(str(built_dataset), name, split="test")
        assert manifest["configs"][name] == {"test": 4 * test.num_rows}
        assert rows.features == SENTENCE_ROWS.features()
        first = test.with_format("arrow")[:1]
        image = first["image"][0]["bytes"].as_py()
        for position in range(4):
            row = rows[position]
            assert row["id"] == f"{first['id'][0]}-{position}"
            assert row["sentence"] == first["captions"][0][position].as_py()
            assert row["target"] == ("yes" if first["labels"][0][position].as_py() else "no")
            assert row["sentence"] in row["question"] and row["question"].endswith("Answer:")
            assert base64.b64decode(row["image"].split(",", 1)[1]) == image


def test_publish_refuses_a_build_without_the_sentence_configs(
    built_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "bla"
    shutil.copytree(built_dataset, copy, copy_function=os.link)
    manifest = json.loads((copy / "manifest.json").read_text())
    for config in sentence_configs():
        shutil.rmtree(copy / "data" / config)
        del manifest["configs"][config]
        manifest["files"] = {k: v for k, v in manifest["files"].items() if config not in k}
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    argv = ["publish", "--repo-id", "bla-org/bla", "--tag", f"v{DATASET_VERSION}"]
    assert main([*argv, "--source", str(copy), "--dry-run"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "task 'active_passive' runs on config 'active_passive_sentences'" in line
    (copy / "eval.yaml").unlink()
    (copy / "eval.yaml").write_text("evaluation_framework: bla-eval\ntasks: []\n")
    manifest["files"]["eval.yaml"]["sha256"] = sha256_file(copy / "eval.yaml")
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main([*argv, "--source", str(copy), "--dry-run"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "evaluation_framework 'bla-eval', which the Hub refuses" in line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tasks: [\n", "is not YAML ("),
        ("- evaluation_framework: inspect-ai\n", "is a YAML list, not a mapping"),
        ("inspect-ai\n", "is a YAML str, not a mapping"),
        ("evaluation_framework: inspect-ai\ntasks: coordination\n", "'tasks' must be a non-empty"),
        ("evaluation_framework: inspect-ai\ntasks: {id: x}\n", "'tasks' must be a non-empty list"),
        ("evaluation_framework: inspect-ai\ntasks: [coordination]\n", "task 1 is not a mapping"),
        (
            "evaluation_framework: inspect-ai\ntasks: [{id: x, config: [a]}]\n",
            "task 'x' runs on config ['a'], which this build lacks",
        ),
    ],
)
def test_publish_refuses_an_eval_yaml_of_the_wrong_shape_in_one_line(
    text: str, message: str, built_dataset: Path, tmp_path: Path, capsys
) -> None:
    copy = tmp_path / "bla"
    shutil.copytree(built_dataset, copy, copy_function=os.link)
    manifest = json.loads((copy / "manifest.json").read_text())
    (copy / "eval.yaml").unlink()
    (copy / "eval.yaml").write_text(text)
    manifest["files"]["eval.yaml"]["sha256"] = sha256_file(copy / "eval.yaml")
    (copy / "manifest.json").unlink()
    (copy / "manifest.json").write_text(json.dumps(manifest))
    argv = ["publish", "--repo-id", "bla-org/bla", "--tag", f"v{DATASET_VERSION}"]
    assert main([*argv, "--source", str(copy), "--dry-run"]) == 2
    err = capsys.readouterr().err
    [line] = err.splitlines()
    assert message in line and "Traceback" not in err, line
