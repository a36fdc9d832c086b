"""bla_space.config: the Space's settings from the environment."""

from __future__ import annotations

import pytest
from bla_space.config import SpaceConfig


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
