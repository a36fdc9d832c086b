"""Responses on disk, keyed by the endpoint and the exact request body, so that a resumed run or a
re-run sends nothing twice.

The key is the SHA-256 of the public endpoint URL (no credentials) and the request body's bytes
(which name the model); the API key is never part of it. A response is written to a temporary
file and renamed into place, so a killed run leaves whole entries or none.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..outputs import write_text_atomic

CACHE_FOLDER = "api-cache"
"""The cache's folder inside a run folder."""


def request_bytes(body: dict[str, Any]) -> bytes:
    """The exact bytes sent for ``body`` (keys sorted, compact): the same body, the same bytes."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def cache_key(endpoint: str, body: bytes) -> str:
    """SHA-256 of the endpoint and the request bytes."""
    return hashlib.sha256(endpoint.encode() + b"\n" + body).hexdigest()


class ResponseCache:
    """Chat-completion responses by :func:`cache_key`, one JSON file each (None folder: in
    memory only)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.memory: dict[str, dict[str, Any]] = {}
        """This process's responses (the cache when there is no folder)."""

    def path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None (absent, or unreadable: it is fetched again)."""
        if key in self.memory or self.folder is None:
            return self.memory.get(key)
        try:
            doc = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return doc.get("response") if isinstance(doc, dict) else None

    def put(self, key: str, endpoint: str, response: dict[str, Any]) -> None:
        """Store ``response`` (on disk atomically)."""
        self.memory[key] = response
        if self.folder is None:
            return
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"endpoint": endpoint, "response": response}, ensure_ascii=False)
        write_text_atomic(path, text)
