"""The endpoint settings' bounds, shared with the inspect tasks' ``-T`` parameters."""

from __future__ import annotations

import pytest
from bla_eval.api.settings import check_answer_settings


@pytest.mark.parametrize(
    ("top_logprobs", "max_answer_tokens", "message"),
    [
        (0, 1, "top_logprobs must be a whole number from 1 to 20, got 0"),
        (-3, 1, "top_logprobs must be a whole number from 1 to 20, got -3"),
        (10**9, 1, "top_logprobs must be a whole number from 1 to 20"),
        ("5", 1, "top_logprobs must be a whole number from 1 to 20, got '5'"),
        (True, 1, "top_logprobs must be a whole number"),
        (5, 0, "max_answer_tokens must be a whole number from 1 to 100000, got 0"),
        (5, -1, "max_answer_tokens must be a whole number from 1 to 100000, got -1"),
        (5, 10**12, "max_answer_tokens must be a whole number from 1 to 100000"),
    ],
)
def test_answer_settings_outside_their_bounds_are_named(top_logprobs, max_answer_tokens, message):
    with pytest.raises(ValueError, match=message):
        check_answer_settings(top_logprobs, max_answer_tokens)


def test_answer_settings_within_their_bounds_pass():
    check_answer_settings(1, 1)
    check_answer_settings(20, 100_000)
