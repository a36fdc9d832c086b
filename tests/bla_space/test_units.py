"""The Space's non-Gradio layer: safety, results folder, tables, explore data, GPU wrapper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from bla_eval.outputs import staged
from bla_space import explore_data, gpu, results_store, views
from bla_space.config import SpaceConfig
from bla_space.safety import (
    ModelRejected,
    check_model_size,
    count_parameters,
    validate_model_id,
)
from safetensors.torch import save_file

from bla_metric import references
from bla_metric.formulas import ranking_metrics


# ----------------------------------------------------------------------------- safety
@pytest.mark.parametrize(
    "model",
    [
        "openai/clip-vit-base-patch32",
        "Salesforce/blip2-opt-2.7b",
        "hf-hub:laion/CLIP-ViT-B-32-laion2B-s34B-b79K",
        "a/b",
    ],
)
def test_hub_ids_are_accepted_as_they_are(model):
    assert validate_model_id(f"  {model} ") == model


@pytest.mark.parametrize(
    "model, message",
    [
        ("", "Enter a model id"),
        ("not a model!!", "not a valid Hub model id"),
        ("gpt2", "not a valid Hub model id"),
        ("org/na--me", "not a valid Hub model id"),
        ("org/name/extra", "not a valid Hub model id"),
        ("-org/name", "not a valid Hub model id"),
        ("org/" + "x" * 97, "not a valid Hub model id"),
        ("../../etc", "local path"),
        ("/etc", "local path"),
    ],
)
def test_bad_model_ids_are_rejected_with_the_id_named(model, message):
    with pytest.raises(ModelRejected, match=message) as err:
        validate_model_id(model)
    if model:
        assert repr(model) in str(err.value)


def test_local_folders_only_when_allowed(tmp_path, monkeypatch):
    folder = tmp_path / "org" / "name"
    folder.mkdir(parents=True)
    assert validate_model_id(str(folder), allow_local=True) == str(folder.resolve())
    with pytest.raises(ModelRejected, match="local path"):
        validate_model_id(str(folder))
    monkeypatch.chdir(tmp_path)  # "org/name" now names a local folder, which from_pretrained reads
    with pytest.raises(ModelRejected, match="local path"):
        validate_model_id("org/name")
    with pytest.raises(ModelRejected, match="is not a folder"):
        validate_model_id(str(tmp_path / "missing"), allow_local=True)


def test_parameters_are_counted_from_safetensors_headers(tmp_path):
    save_file({"a": torch.zeros(3, 5), "b": torch.zeros(7)}, tmp_path / "model-1.safetensors")
    save_file({"c": torch.zeros(2, 2, 2, dtype=torch.float16)}, tmp_path / "model-2.safetensors")
    assert count_parameters(str(tmp_path)) == (15 + 7 + 8, "safetensors headers")
    assert check_model_size(str(tmp_path), max_params=30) == 30
    with pytest.raises(ModelRejected, match=r"30 parameters .* up to 29"):
        check_model_size(str(tmp_path), max_params=29)


def test_models_of_unknown_size_are_not_loaded(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelRejected, match="Cannot check the size"):
        check_model_size(str(tmp_path), max_params=1e9)
    torch.save({"w": torch.zeros(100)}, tmp_path / "pytorch_model.bin")
    count, how = count_parameters(str(tmp_path))
    assert count >= 100 and how == "estimated from weight file sizes"


# ----------------------------------------------------------------------------- config, GPU
def test_config_from_environment(tmp_path):
    env = {
        "BLA_DATASET": "org/bla",
        "BLA_RESULTS_DIR": str(tmp_path),
        "BLA_MAX_PARAMS": "1.5e9",
        "BLA_ALLOW_LOCAL_MODELS": "true",
        "BLA_DEFAULT_LIMIT": "8",
    }
    config = SpaceConfig.from_env(env)
    assert (config.dataset, config.results_dir, config.max_params) == ("org/bla", tmp_path, 1.5e9)
    assert config.allow_local_models and config.default_limit == 8
    assert not SpaceConfig.from_env({}).allow_local_models
    with pytest.raises(ValueError, match="BLA_MAX_PARAMS='big'"):
        SpaceConfig.from_env({"BLA_MAX_PARAMS": "big"})


def test_gpu_duration_grows_with_datapoints_and_is_capped():
    small, large = gpu.estimate_gpu_seconds(12, "contrastive"), gpu.estimate_gpu_seconds(1939, None)
    assert gpu.LOAD_SECONDS < small < large
    assert gpu.estimate_gpu_seconds(1939, "generative") > large
    assert gpu.estimate_gpu_seconds(10**6, "generative") == gpu.MAX_GPU_SECONDS


def test_spaces_gpu_is_a_no_op_off_zerogpu():
    import spaces.config

    assert not spaces.config.Config.zero_gpu  # SPACES_ZERO_GPU is unset here
    assert gpu.evaluate_on_gpu.__module__ == "bla_space.gpu"
    assert not hasattr(gpu.evaluate_on_gpu, "zerogpu")  # what spaces.GPU marks on ZeroGPU


# ----------------------------------------------------------------------------- results folder
def _results(model: str, n: int, created: str, set_accuracy: float = 0.25) -> dict:
    metrics = {"sentence_accuracy": 0.5, "set_accuracy": set_accuracy, "set_error": 0.25, "n": n}
    return {
        "model": model,
        "kind": "contrastive",
        "protocol": {"binary_view": "top-k", "similarity": "cosine"},
        "created": created,
        "tasks": {"active_passive": {"n": n, "ranking": metrics, "binary": {"accuracy": 0.5}}},
    }


SCORES_OF_RESULTS = [[4, 3, 2, 1], [1, 2, 3, 4], [4, 1, 3, 2], [4, 1, 3, 2]]
"""Four datapoints whose metrics are those of ``_results(..., 4, ...)`` (set accuracy and set
error 0.25, sentence and binary accuracy 0.5): the scores.jsonl a run of them writes."""


def _publish(results_dir: Path, results: dict) -> Path:
    target = results_store.new_run_path(results_dir, results["model"])
    types = ["TP1", "TP2", "FP1", "FP2"]
    records = [
        {"task": "active_passive", "id": f"ap-{k}", "scores": s, "labels": [1, 1, 0, 0]}
        | {"caption_types": types}
        for k, s in enumerate(SCORES_OF_RESULTS)
    ]
    with staged(target) as staging:
        (staging / "results.json").write_text(json.dumps(results))
        (staging / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return target


def test_runs_are_listed_newest_first_without_partial_or_broken_ones(tmp_path):
    old = _publish(tmp_path, _results("org/a", 4, "2026-01-01T00:00:00"))
    new = _publish(tmp_path, _results("org/b", 4, "2026-02-01T00:00:00"))
    with pytest.raises(RuntimeError), staged(results_store.new_run_path(tmp_path, "org/c")) as part:
        (part / "results.json").write_text(json.dumps(_results("org/c", 4, "2026-03-01")))
        (tmp_path / "broken").mkdir()
        (tmp_path / "broken" / "results.json").write_text("{not json")
        assert [r.path for r in results_store.list_runs(tmp_path)] == [new, old]
        assert results_store.find_run(tmp_path, old.name).results["model"] == "org/a"
        raise RuntimeError("the run failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([old.name, new.name, "broken"])


def test_run_folder_names_are_safe_and_unique():
    first = results_store.run_folder_name("/tmp/x/tiny clip")
    assert first.startswith("tiny_clip-") and "/" not in first
    assert results_store.run_folder_name("org/name") != results_store.run_folder_name("org/name")


# ----------------------------------------------------------------------------- tables
def test_metrics_table_puts_the_run_above_the_published_rows():
    table = views.metrics_table(_results("org/a", 4, "2026"), "ranking")
    assert list(table["model"][:2]) == ["org/a", "Chance"]
    assert table.loc[0, "AP set acc"] == 25.0
    assert list(table.columns) == views.metrics_table_columns()
    assert table.loc[0, "CO sent. acc"] is None  # not scored by the run; chance has it
    assert table.loc[1, "CO sent. acc"] == 50.0
    binary = views.metrics_table(_results("org/a", 4, "2026"), "binary")
    assert len(binary.columns) == len(table.columns) and binary.loc[0, "AP acc"] == 50.0
    clip = table[(table["model"] == "CLIP")].iloc[0]
    published = references.reference_rows("active_passive", "ranking")
    expected = next(r for r in published if r["model"] == "CLIP")["set_accuracy"]
    assert clip["AP set acc"] == round(100 * expected, 2) == 6.2


def test_bar_frame_has_the_run_first_then_chance_people_and_models():
    frame = views.bar_frame(_results("org/a", 4, "2026"), "binary", "active_passive")
    assert frame.iloc[0].to_dict() == {"model": "a", "value": 50.0, "group": "this run"}
    humans = frame[frame["model"] == "Humans"].iloc[0]
    assert (humans["value"], humans["group"]) == (92.0, "people")
    assert set(frame["group"]) == set(views.GROUP_COLORS)


def test_leaderboard_keeps_the_most_complete_run_per_model_and_protocol():
    runs = [
        _results("org/a", 613, "2026-01-01", set_accuracy=0.1),
        _results("org/a", 4, "2026-02-01", set_accuracy=0.9),  # later but a quick run
        _results("org/b", 4, "2026-01-01"),
    ]
    board = views.leaderboard_table(runs, "ranking")
    assert list(board.columns) == views.leaderboard_columns()
    mine = board[board["model"] == "org/a"]
    assert len(mine) == 1 and mine.iloc[0]["AP set acc"] == 10.0
    assert mine.iloc[0]["protocol"] == "zero-shot, top-k, cosine"
    assert {"Chance", "CLIP", "Experts", "org/b"} <= set(board["model"])
    headline = board["AP sent. acc"].astype(float)
    assert list(headline) == sorted(headline, reverse=True)  # sorted by mean sentence accuracy


# ----------------------------------------------------------------------------- explore data
@pytest.fixture(scope="module")
def run_scores(built_dataset, tmp_path_factory) -> tuple[Path, dict]:
    """A scores.jsonl of 6 AP datapoints, every second one a set error."""
    run = tmp_path_factory.mktemp("run")
    ids = explore_data.select_ids(str(built_dataset), "active_passive", {})[:6]
    lines = []
    for n, point_id in enumerate(ids):
        scores = [0.1, 0.2, 0.8, 0.9] if n % 2 else [0.9, 0.8, 0.2, 0.1]
        lines.append(
            {
                "task": "active_passive",
                "id": point_id,
                "scores": scores,
                "labels": [1, 1, 0, 0],
                "caption_types": ["TA", "TP", "FA", "FP"],
            }
        )
    (run / "scores.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run, {line["id"]: line for line in lines}


def test_explore_filters_set_errors_and_verbs(built_dataset, run_scores):
    data = str(built_dataset)
    run, lines = run_scores
    scores = explore_data.load_scores(str(run))
    ids = explore_data.select_ids(data, "active_passive", scores)
    assert len(ids) == 613 and ids[:6] == list(lines)
    failures = explore_data.select_ids(data, "active_passive", scores, failures_only=True)
    expected = [
        i
        for i, line in lines.items()
        if ranking_metrics([line["scores"]], [line["labels"]])["set_error"] == 1
    ]
    assert failures == expected and len(failures) == 3
    verbs = explore_data.verbs(data, "active_passive")
    assert verbs[0] == "watches" and explore_data.verbs(data, "coordination") == []
    watching = explore_data.select_ids(data, "active_passive", {}, verb="watches")
    assert 20 < len(watching) < 613
    assert all(
        explore_data.datapoint(data, "active_passive", i)["predicate"] == "watches"
        for i in watching[:3]
    )


def test_sentence_table_marks_each_sentence(built_dataset, run_scores):
    run, lines = run_scores
    first, second = list(lines)[:2]
    row = explore_data.datapoint(str(built_dataset), "active_passive", second)
    assert row["image"].mode == "RGB" and len(row["captions"]) == 4
    table = explore_data.sentence_table(row, lines[second])
    assert list(table["truth"]) == ["true", "true", "false", "false"]
    assert list(table["rank"]) == [4, 3, 2, 1]
    assert list(table["ranked correctly"]) == ["no"] * 4
    good = explore_data.sentence_table(row, lines[first])
    assert list(good["ranked correctly"]) == ["yes"] * 4
    bare = explore_data.sentence_table(row, None)
    assert list(bare["sentence"]) == row["captions"] and set(bare["score"]) == {""}
