"""Where a run's region features come from (``--regions PATH_OR_DETECTOR``), resolved once.

- a ``.tsv`` file: the authors' layout (:mod:`bla_eval.regions.tsv`), looked up by image id;
- a region store folder (:mod:`bla_eval.regions.store`): regions kept by an earlier extraction;
- any other folder or a Hub id: the bottom-up-attention detector (``bla_eval.regions.detector``),
  run on each image not in its store yet and kept there (by the image's content hash).

``record()`` is what ``run.json`` keeps (it decides the scores: a resume with other regions is
refused); ``describe()`` what ``results.json`` says of them.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..items import ImageHandle
from ..outputs import open_regular
from .features import RegionFeatures
from .store import RegionStore, cache_root, image_hash, store_key
from .tsv import RegionTable

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Pending:
    """An image whose regions are still to be detected: its content hash and pixels."""

    sha256: str
    image: Any


class RegionSource(ABC):
    """The region features of a run's images."""

    @abstractmethod
    def record(self) -> dict[str, Any]:
        """What decides the regions (``run.json``'s ``regions``)."""

    def describe(self) -> dict[str, Any]:
        """What ``results.json`` says of the regions (default: the record)."""
        return {"regions": self.record()}

    @abstractmethod
    def lookup(self, image: ImageHandle) -> RegionFeatures | Pending:
        """The regions of one image, or what detecting them needs (threads call this)."""

    def complete(self, prepared: Sequence[RegionFeatures | Pending]) -> list[RegionFeatures]:
        """``prepared`` with every :class:`Pending` image's regions detected (default: none)."""
        return list(prepared)  # type: ignore[arg-type]


class TsvRegions(RegionSource):
    """A TSV file in the authors' layout; each image found by its ``image_id``."""

    def __init__(self, path: Path | str) -> None:
        self.table = RegionTable(path)

    def record(self) -> dict[str, Any]:
        return {"tsv_sha256": self.table.sha256}

    def describe(self) -> dict[str, Any]:
        return {"regions": {"tsv": str(self.table.path), "tsv_sha256": self.table.sha256}}

    def lookup(self, image: ImageHandle) -> RegionFeatures:
        where = f"{image.item.task} item {image.item.id}"
        if image.image_id is None:
            raise ValueError(
                f"--regions {self.table.path}: the image of {where} ({image.key}) has no "
                "image_id to look up in a TSV; give a detector for it"
            )
        try:
            return self.table.get(image.image_id)
        except KeyError as err:
            raise ValueError(f"{err.args[0]} ({where})") from None


class StoredRegions(RegionSource):
    """A region store folder, read only: every image must be in it."""

    def __init__(self, folder: Path | str) -> None:
        self.store = RegionStore(folder)
        self.made_by = self.store.record()

    def record(self) -> dict[str, Any]:
        return self.made_by

    def lookup(self, image: ImageHandle) -> RegionFeatures:
        sha256 = image_hash(image.encoded())
        found = self.store.get(sha256)
        if found is None:
            raise ValueError(
                f"region store {self.store.folder} has no regions of the image of "
                f"{image.item.task} item {image.item.id} ({image.key}): give the detector"
            )
        return found


class DetectedRegions(RegionSource):
    """The bottom-up-attention detector, its regions kept in a store in the user's cache."""

    def __init__(self, detector: str, store_root: Path | None = None) -> None:
        self.detector = detector
        self.made_by = detector_record(detector)
        root = store_root or cache_root()
        self.store = RegionStore.create(root / store_key(self.made_by), self.made_by)
        self.model: Any = None
        self.bar: Any = None

    def record(self) -> dict[str, Any]:
        return self.made_by

    def describe(self) -> dict[str, Any]:
        described = dict(self.made_by, store=str(self.store.folder))
        if self.model is not None:
            described["detector_details"] = self.model.describe()
        return {"regions": described}

    def lookup(self, image: ImageHandle) -> RegionFeatures | Pending:
        sha256 = image_hash(image.encoded())
        found = self.store.get(sha256)
        return found if found is not None else Pending(sha256, image.decoded())

    def complete(self, prepared: Sequence[RegionFeatures | Pending]) -> list[RegionFeatures]:
        pending = [p for p in prepared if isinstance(p, Pending)]
        if not pending:
            return list(prepared)  # type: ignore[arg-type]
        detected = dict(zip([p.sha256 for p in pending], self._detect(pending), strict=True))
        return [detected[p.sha256] if isinstance(p, Pending) else p for p in prepared]

    def _detect(self, pending: Sequence[Pending]) -> list[RegionFeatures]:
        from tqdm.auto import tqdm

        if self.model is None:
            self.model = load_detector(self.detector)
        if self.bar is None:
            self.bar = tqdm(desc="extracting regions", unit="image")
        found = self.model.detect([p.image for p in pending])
        for item, regions in zip(pending, found, strict=True):
            self.store.put(item.sha256, regions)
        self.bar.update(len(pending))
        return list(found)


def load_detector(detector: str) -> Any:
    """The bottom-up-attention Faster R-CNN of a folder or Hub id at its default settings."""
    from .detector import BottomUpDetector

    return BottomUpDetector.from_pretrained(detector)


def detector_record(detector: str) -> dict[str, Any]:
    """What makes a detector's regions: its folder or Hub id, revision, resize and box count
    (the detector's defaults, which :func:`load_detector` runs it at)."""
    from .detector import BOXES, MAX_SIZE, MIN_SIZE

    return {
        "detector": detector,
        "revision": detector_revision(detector),
        "min_size": MIN_SIZE,
        "max_size": MAX_SIZE,
        "boxes": BOXES,
    }


def detector_revision(detector: str) -> str | None:
    """A local detector folder's content hash: SHA-256 over its files' names and bytes (None
    for a Hub id: its revision is in the detector's own description, ``results.json``)."""
    import hashlib

    path = Path(detector)
    if not path.is_dir():
        return None
    digest = hashlib.sha256()
    for file in sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")):
        digest.update(file.name.encode("utf-8", "surrogateescape") + b"\0")
        with os.fdopen(open_regular(file), "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def _form(spec: str) -> str:
    """``tsv``, ``store`` or ``detector``: what ``--regions`` names (a ValueError in one line
    names a value that is none of them)."""
    path = Path(spec)
    if spec.lower().endswith(".tsv"):
        if not path.is_file():
            raise ValueError(f"--regions {spec}: no such file")
        return "tsv"
    if path.is_dir():
        return "store" if RegionStore.is_store(path) else "detector"
    if path.exists() or not HUB_ID.match(spec) or spec.startswith((".", "/", "~")):
        raise ValueError(
            f"--regions {spec}: not a .tsv file, a region store, a detector folder or a Hub id"
        )
    return "detector"


def open_regions(spec: str, store_root: Path | None = None) -> RegionSource:
    """The region source ``--regions`` names (a ValueError in one line names a bad one)."""
    form = _form(spec)
    if form == "tsv":
        return TsvRegions(spec)
    if form == "store":
        return StoredRegions(spec)
    return DetectedRegions(spec, store_root)


def regions_record(spec: str) -> dict[str, Any]:
    """The record of the regions ``--regions`` names (:meth:`RegionSource.record`), made
    without running or storing anything."""
    form = _form(spec)
    if form == "tsv":
        return {"tsv_sha256": RegionTable(spec).sha256}
    if form == "store":
        return RegionStore(spec).record()
    return detector_record(spec)
