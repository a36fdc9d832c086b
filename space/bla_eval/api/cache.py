"""Responses on disk, keyed by the endpoint and the exact request body, so that a resumed run or a
re-run sends nothing twice.

The key is the SHA-256 of the full endpoint URL (its query string included: ``?route=a`` and
``?route=b`` are different endpoints; an endpoint never carries credentials) and the request
body's bytes (which name the model); the API key is never part of it. A response is written to a
temporary file and renamed into place, so a killed run leaves whole entries or none. The cache
holds at most :data:`MAX_CACHE_BYTES`; a response beyond that is used but not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from ..outputs import parse_json, read_regular, write_text_atomic

CACHE_FOLDER = "api-cache"
"""The cache's folder inside a run folder."""

MAX_CACHE_BYTES = 2 * 2**30
"""The most bytes of responses one cache holds (on disk, or in memory without a folder): 2 GiB,
hundreds of thousands of chat completions."""


def request_bytes(body: dict[str, Any]) -> bytes:
    """The exact bytes sent for ``body`` (keys sorted, compact): the same body, the same bytes."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def cache_key(endpoint: str, body: bytes) -> str:
    """SHA-256 of the endpoint and the request bytes."""
    return hashlib.sha256(endpoint.encode() + b"\n" + body).hexdigest()


class ResponseCache:
    """Chat-completion responses by :func:`cache_key`, one JSON file each (None folder: in
    memory only)."""

    def __init__(self, folder: Path | None, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.memory: dict[str, dict[str, Any]] = {}
        """This process's responses (the cache when there is no folder)."""
        self.max_bytes = max_bytes
        self.size = self._size_on_disk()
        """Bytes the cache holds."""
        self.full = False
        """Set when a response was not kept because the cache is full."""

    def _size_on_disk(self) -> int:
        if self.folder is None or not self.folder.is_dir():
            return 0
        total = 0
        for entry in self.folder.glob("*/*.json"):
            with contextlib.suppress(OSError):
                total += entry.lstat().st_size
        return total

    def path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None (absent, or unreadable: it is fetched again)."""
        if key in self.memory or self.folder is None:
            return self.memory.get(key)
        try:
            doc = parse_json(read_regular(self.path(key)).decode("utf-8"))
        except (OSError, ValueError):
            return None
        return doc.get("response") if isinstance(doc, dict) else None

    def put(self, key: str, endpoint: str, response: dict[str, Any]) -> None:
        """Store ``response`` (on disk atomically) unless the cache is full."""
        text = json.dumps({"endpoint": endpoint, "response": response}, ensure_ascii=False)
        size = len(text.encode())
        if self.size + size > self.max_bytes:
            self.full = True
            return
        self.size += size
        if self.folder is None:
            self.memory[key] = response
            return
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
        self.memory[key] = response
