"""The strict checkpoint loader on the released OpenFlamingo checkpoints' key names and shapes
(``released_keys.json``, derived by ``python -m bla_eval.testing.flamingo`` from the releases'
sizes: each model built at its real size on the meta device), and the parts of a model as a Hub
id or a folder names them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import torch
from bla_eval.flamingo.checkpoint import load_checkpoint, read_checkpoint
from bla_eval.flamingo.spec import CHECKPOINT, CONFIG, releases, spec_for
from bla_eval.scorers import resolve
from bla_eval.testing.flamingo import config_for, released_keys, released_on_meta

KEYS = Path(__file__).parent / "released_keys.json"
AUTHORS = "openflamingo/OpenFlamingo-4B-vitl-rpj3b-langinstruct"


@pytest.fixture(scope="module")
def committed() -> dict[str, dict[str, list[int]]]:
    return json.loads(KEYS.read_text(encoding="utf-8"))


def meta_state(keys: dict[str, list[int]]) -> dict[str, torch.Tensor]:
    return {k: torch.empty(shape, device="meta") for k, shape in keys.items()}


def test_the_committed_list_is_the_architectures_keys(committed) -> None:
    assert committed == released_keys()
    assert set(committed) == set(releases())


@pytest.mark.parametrize("hub_id", sorted(releases()))
def test_every_released_key_is_consumed(hub_id, committed) -> None:
    keys = committed[hub_id]
    report = load_checkpoint(released_on_meta(hub_id), meta_state(keys), hub_id)
    assert sorted(report.used) == sorted(keys) and report.unused == []
    assert any("gated_cross_attn_layer" in k for k in keys)
    assert any(k.startswith("perceiver.") for k in keys)


def test_the_renamed_head_of_gpt_neox_is_used(committed) -> None:
    report = load_checkpoint(released_on_meta(AUTHORS), meta_state(committed[AUTHORS]), AUTHORS)
    assert report.renamed == {"lang_encoder.embed_out.weight": "lang_encoder.lm_head.weight"}


@pytest.mark.parametrize(
    "dropped",
    ["lang_encoder.embed_out.weight", "perceiver.latents", "lang_encoder.gpt_neox.embed_in.weight"],
)
def test_a_missing_key_is_an_error_naming_it(dropped, committed) -> None:
    keys = dict(committed[AUTHORS])
    del keys[dropped]
    with pytest.raises(ValueError, match=f"lacks {dropped.replace('.', '[.]')}"):
        load_checkpoint(released_on_meta(AUTHORS), meta_state(keys), "ckpt")


def test_a_wrong_shape_is_an_error_and_a_foreign_key_is_listed_unused(committed) -> None:
    keys = dict(committed[AUTHORS], **{"lang_encoder.old_decoder_blocks.0.x": [2]})
    report = load_checkpoint(released_on_meta(AUTHORS), meta_state(keys), "ckpt")
    assert report.unused == ["lang_encoder.old_decoder_blocks.0.x"]
    keys["perceiver.latents"] = [63, 1024]
    with pytest.raises(ValueError, match=r"perceiver\.latents has shape \(63, 1024\)"):
        load_checkpoint(released_on_meta(AUTHORS), meta_state(keys), "ckpt")


def test_a_pickle_with_code_is_refused(tmp_path: Path) -> None:
    torch.save({"x": argparse.Namespace(a=1)}, tmp_path / CHECKPOINT)
    with pytest.raises(ValueError, match="cannot read .* as weights"):
        read_checkpoint(tmp_path / CHECKPOINT)


def test_the_authors_hub_id_resolves_to_its_parts_without_the_network(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = resolve(AUTHORS)
    assert model.kind == "flamingo" and model.config is None
    spec = spec_for(AUTHORS)
    assert spec.record() == {
        "clip_vision_encoder_path": "ViT-L-14",
        "clip_vision_encoder_pretrained": "openai",
        "lang_encoder_path": "togethercomputer/RedPajama-INCITE-Instruct-3B-v1",
        "tokenizer_path": "togethercomputer/RedPajama-INCITE-Instruct-3B-v1",
        "cross_attn_every_n_layers": 2,
    }
    assert spec.checkpoint is None and not spec.remote_code


def folder(tmp_path: Path, config: dict) -> Path:
    (tmp_path / CHECKPOINT).write_bytes(b"")
    (tmp_path / CONFIG).write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def test_a_folder_names_its_parts_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "lm").mkdir()
    (tmp_path / "vision").mkdir()
    spec = spec_for(str(folder(tmp_path, config_for())))
    assert spec.lang_encoder_path == str(tmp_path / "lm")
    assert spec.clip_vision_encoder_path == f"local-dir:{tmp_path / 'vision'}"
    assert spec.checkpoint == tmp_path / CHECKPOINT
    assert resolve(str(tmp_path)).kind == "flamingo"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tokenizer_path": None}, "tokenizer_path must be a non-empty string"),
        ({"cross_attn_every_n_layers": 0}, "cross_attn_every_n_layers must be a whole number"),
        ({"num_beams": 2}, "unknown key 'num_beams'"),
    ],
)
def test_a_bad_config_is_named(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spec_for(str(folder(tmp_path, {**config_for(), **change})))


def test_a_missing_argument_is_named(tmp_path: Path) -> None:
    config = config_for()
    del config["lang_encoder_path"]
    with pytest.raises(ValueError, match="lacks 'lang_encoder_path'"):
        spec_for(str(folder(tmp_path, config)))
