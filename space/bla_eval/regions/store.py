"""Region features kept on disk, one file per image, keyed by the image's content hash.

A store is a folder for one way of making regions (a detector at its settings): its
:data:`STORE_FILE` records that way, and ``<hh>/<sha256>.npz`` holds the regions of the image
whose encoded bytes hash to ``sha256``. Files are written atomically (``bla_eval.outputs``), so a
killed extraction leaves whole files only; a file that does not read back is an error naming it.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..outputs import atomic_file, read_json, read_regular, write_json_atomic
from ..user_cache import user_cache
from .features import RegionFeatures

STORE_FILE = "regions-store.json"
"""The file that makes a folder a region store: what made its regions."""
MAX_FILE = 256 << 20
"""The largest regions file read, in bytes."""


def image_hash(encoded: bytes) -> str:
    """The content hash a store keys an image by: SHA-256 of its encoded bytes."""
    return hashlib.sha256(encoded).hexdigest()


def cache_root() -> Path:
    """Where detector stores live: ``regions/`` of the user cache (``bla_eval.user_cache``)."""
    return user_cache() / "regions"


def store_key(record: dict[str, Any]) -> str:
    """The folder name of the store of ``record`` (what made the regions)."""
    text = json.dumps(record, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RegionStore:
    """The regions a store folder holds, by image content hash."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    @classmethod
    def create(cls, folder: Path | str, record: dict[str, Any]) -> RegionStore:
        """The store at ``folder``, made with ``record`` where it is new (a store made another
        way is refused, naming both)."""
        store = cls(folder)
        if store.is_store(folder):
            if store.record() != record:
                raise ValueError(
                    f"region store {folder} was made by {store.record()}, not {record}"
                )
            return store
        store.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(store.folder / STORE_FILE, {"made_by": record})
        return store

    @staticmethod
    def is_store(folder: Path | str) -> bool:
        """Whether ``folder`` is a region store."""
        return (Path(folder) / STORE_FILE).is_file()

    def record(self) -> dict[str, Any]:
        """What made the store's regions (its :data:`STORE_FILE`)."""
        made_by = read_json(self.folder / STORE_FILE).get("made_by")
        if not isinstance(made_by, dict):
            raise ValueError(f"{self.folder / STORE_FILE} has no made_by object")
        return made_by

    def path(self, sha256: str) -> Path:
        """The file of the image whose content hash is ``sha256``."""
        return self.folder / sha256[:2] / f"{sha256}.npz"

    def __contains__(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def get(self, sha256: str) -> RegionFeatures | None:
        """The regions of an image (None: not in the store)."""
        path = self.path(sha256)
        if not path.is_file():
            return None
        data = read_regular(path, MAX_FILE)
        if len(data) > MAX_FILE:
            raise ValueError(f"region file {path} is larger than {MAX_FILE} bytes")
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                size = arrays["image_size"]
                return RegionFeatures(
                    arrays["features"], arrays["boxes"], (int(size[0]), int(size[1]))
                )
        except (OSError, ValueError, KeyError, IndexError) as err:
            raise ValueError(f"region file {path} cannot be read: {err}") from None

    def put(self, sha256: str, regions: RegionFeatures) -> None:
        """Keep ``regions`` as the image's, written atomically."""
        path = self.path(sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        size = np.array(regions.image_size, dtype=np.int64)
        with atomic_file(path, binary=True) as handle:
            np.savez(handle, features=regions.features, boxes=regions.boxes, image_size=size)
