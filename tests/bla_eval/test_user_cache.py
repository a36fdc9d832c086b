"""The user cache: one resolver (``$BLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/bla``, else
``~/.cache/bla``) for every cache the tools keep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.user_cache import user_cache


def test_the_variables_in_their_order(tmp_path):
    home = Path.home() / ".cache" / "bla"
    assert user_cache({}) == home
    assert user_cache({"BLA_CACHE_DIR": "", "XDG_CACHE_HOME": ""}) == home  # empty: unset
    assert user_cache({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "bla"
    both = {"XDG_CACHE_HOME": str(tmp_path), "BLA_CACHE_DIR": str(tmp_path / "mine")}
    assert user_cache(both) == tmp_path / "mine"


@pytest.fixture
def xdg(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("BLA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "bla"


def _config_only(folder: Path, texts: list[str]) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"texts": texts}), encoding="utf-8")


def test_every_cache_follows_xdg_cache_home(xdg):
    from bla_eval.regions.store import cache_root
    from bla_eval.testing.architectures import build_once

    assert cache_root() == xdg / "regions"
    folder = build_once("config-only", _config_only, ["a dog"])
    assert folder.is_relative_to(xdg / "tiny-models") and (folder / "config.json").is_file()
