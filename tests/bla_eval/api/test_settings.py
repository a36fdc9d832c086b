"""``api_settings``: the endpoint kind's settings taken from a run's ``RunConfig`` by field name,
the endpoint and the key's variable resolved."""

from __future__ import annotations

from dataclasses import fields

from bla_eval.api.settings import ApiSettings, api_settings, recorded_endpoint
from bla_eval.config import RunConfig


def test_the_api_settings_are_the_runs_settings_of_their_names(tmp_path):
    config = RunConfig(
        "m", "o", endpoint="gemini", request_timeout=2.5, api_scoring="generation", top_logprobs=3
    )
    settings = api_settings(config, tmp_path)
    resolved = {"endpoint", "api_key_env", "cache_dir"}
    for f in fields(ApiSettings):
        if f.name not in resolved:
            assert getattr(settings, f.name) == getattr(config, f.name), f.name
    assert settings.endpoint == "https://generativelanguage.googleapis.com/v1beta/openai"
    assert settings.api_key_env == "GEMINI_API_KEY" and settings.cache_dir == tmp_path
    assert api_settings(config.with_(api_key_env="MY_KEY")).api_key_env == "MY_KEY"
    assert api_settings(RunConfig("m", "o")) is None


def test_the_endpoint_is_recorded_as_its_public_base_url():
    assert recorded_endpoint("openai") == "https://api.openai.com/v1"
    assert recorded_endpoint("http://h:1/v1/chat/completions?key=s") == "http://h:1/v1"
