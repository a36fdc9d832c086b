"""bla_space.runner: the kinds and examples the Space offers."""

from __future__ import annotations

from bla_eval.scorers import KIND_INFO
from bla_space.runner import kind_examples


def test_no_example_is_larger_than_the_spaces_cap():
    for cap in (4e9, 1e9):
        offered = {model for model, _ in kind_examples(cap)}
        sizes = {info.example: info.example_params for info in KIND_INFO.values()}
        sizes.update(m for info in KIND_INFO.values() for m in info.more_examples)
        assert offered and all(sizes[m] is None or sizes[m] <= cap for m in offered)
    assert "llava-hf/llava-1.5-7b-hf" not in {m for m, _ in kind_examples(4e9)}
    assert "Salesforce/blip2-opt-2.7b" not in {m for m, _ in kind_examples(1e9)}
    assert "llava-hf/llava-1.5-7b-hf" in {m for m, _ in kind_examples()}  # no cap: every kind


def test_the_examples_cover_the_generative_families():
    """Beside each kind's example, models of the families researchers use (docs/models.md)."""
    generative = {m for m, kind in kind_examples(4e9) if kind == "generative"}
    for family in ("SmolVLM", "LFM2-VL", "llava-onevision", "InternVL3", "Qwen3-VL", "Qwen2.5-VL"):
        assert any(family in model for model in generative), family


def test_the_tiny_model_of_the_offline_first_try_is_accepted_as_a_local_folder(tmp_path):
    from bla_eval.testing.tiny import build
    from bla_space.config import SpaceConfig
    from bla_space.runner import AUTO, resolve_model

    folder = build(tmp_path / "tiny-llava")
    config = SpaceConfig.from_env({"BLA_ALLOW_LOCAL_MODELS": "1", "BLA_RESULTS_DIR": str(tmp_path)})
    model, kind, n_params = resolve_model(config, str(folder), AUTO)
    assert (model, kind) == (str(folder.resolve()), "generative") and 0 < n_params < 1e6
