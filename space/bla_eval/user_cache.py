"""The project's user cache folder: one resolver for every cache the tools keep.

``$BLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/bla``, else ``~/.cache/bla`` (an empty variable counts
as unset). Under it: the release zip (``python -m builders release``), region stores
(``regions/``), tiny test models (``tiny-models/``), the Space's pulled results (``published/``).
Standard library only: the builders and the Space import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_ENV = "BLA_CACHE_DIR"
"""The variable that names the cache folder itself."""


def user_cache(env: Mapping[str, str] | None = None) -> Path:
    """``$BLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/bla``, else ``~/.cache/bla``, read from ``env``
    (default: ``os.environ``)."""
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV])
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bla"
