"""bla_space.safety: which model ids and folders the Space accepts, and the size limit read
from safetensors headers."""

from __future__ import annotations

import pytest
import torch
from bla_space.safety import (
    ModelRejected,
    check_model_size,
    count_parameters,
    validate_model_id,
)
from safetensors.torch import save_file


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


@pytest.mark.slow
def test_a_bundled_short_name_is_accepted_and_counted_from_its_gguf_tensors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert validate_model_id(" smollm2 ") == "smollm2"
    count, how = count_parameters("smollm2")
    assert how == "GGUF tensors" and 1e8 < count < 2e8  # SmolLM2-135M
    assert check_model_size("smollm2", 4e9) == count
    (tmp_path / "smollm2").mkdir()  # a folder of that name wins, as in the engine: refused here
    with pytest.raises(ModelRejected):
        validate_model_id("smollm2")
