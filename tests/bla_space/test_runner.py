"""bla_space.runner: the kinds and examples the Space offers."""

from __future__ import annotations

from bla_eval.scorers import KIND_INFO
from bla_space.runner import kind_examples


def test_no_example_is_larger_than_the_spaces_cap():
    for cap in (4e9, 1e9):
        offered = {model for model, _ in kind_examples(cap)}
        sizes = {info.example: info.example_params for info in KIND_INFO.values()}
        assert offered and all(sizes[m] is None or sizes[m] <= cap for m in offered)
    assert "llava-hf/llava-1.5-7b-hf" not in {m for m, _ in kind_examples(4e9)}
    assert "Salesforce/blip2-opt-2.7b" not in {m for m, _ in kind_examples(1e9)}
    assert "llava-hf/llava-1.5-7b-hf" in {m for m, _ in kind_examples()}  # no cap: every kind
