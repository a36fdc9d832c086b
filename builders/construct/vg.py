"""Streaming readers for the Visual Genome v1.4 JSON files (plain, ``.json.gz`` or ``.json.zip``).

The big files (objects, attributes, relationships: one JSON array of per-image records each) are
read one record at a time, so the whole of Visual Genome never sits in memory. The files list
images in the same order; :func:`iter_images` walks them in lockstep and yields one
:class:`VGImage` per image.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

FILES = ("image_data", "objects", "attributes", "relationships")
"""The Visual Genome files the construction reads (``<name>.json`` with optional compression)."""

_CHUNK = 1 << 16


class VGError(ValueError):
    """A Visual Genome file is missing or malformed (the message names it)."""


@dataclass
class VGObject:
    """One annotated object: id, names, WordNet synsets, box, and its attributes."""

    object_id: int
    names: list[str]
    synsets: list[str]
    x: float
    y: float
    w: float
    h: float
    attributes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The first name, lower-cased and stripped (VG names may carry stray spaces)."""
        return " ".join(self.names[0].lower().split()) if self.names else ""

    @property
    def area(self) -> float:
        return max(self.w, 0.0) * max(self.h, 0.0)


@dataclass
class VGRelationship:
    """One relationship ``subject predicate object`` (ids point into :attr:`VGImage.objects`)."""

    relationship_id: int
    predicate: str
    subject_id: int
    object_id: int


@dataclass
class VGImage:
    """Everything the construction needs about one image."""

    image_id: int
    width: int
    height: int
    objects: dict[int, VGObject]
    relationships: list[VGRelationship]

    @property
    def area(self) -> float:
        return float(self.width * self.height)


def find_file(vg_dir: Path, name: str) -> Path:
    """``vg_dir/name.json`` or its ``.json.gz`` / ``.json.zip`` / ``.zip`` form."""
    for suffix in (".json", ".json.gz", ".json.zip", ".zip"):
        path = vg_dir / f"{name}{suffix}"
        if path.is_file():
            return path
    raise VGError(f"{vg_dir}: no {name}.json (nor .json.gz/.json.zip/.zip) -- is this a VG folder?")


def open_text(path: Path) -> IO[str]:
    """Open a JSON file, a gzipped one, or the single ``.json`` member of a zip, as text."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    if path.suffix == ".zip":
        archive = zipfile.ZipFile(path)
        members = [m for m in archive.namelist() if m.endswith(".json")]
        if len(members) != 1:
            raise VGError(f"{path}: expected exactly one .json member, found {members}")
        return io.TextIOWrapper(archive.open(members[0]), encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_array(path: Path) -> Iterator[dict]:
    """Yield the elements of the top-level JSON array in ``path`` one at a time."""
    decoder = json.JSONDecoder()
    with open_text(path) as handle:
        buffer = handle.read(_CHUNK).lstrip()
        if not buffer.startswith("["):
            raise VGError(f"{path}: expected a JSON array of per-image records")
        pos, eof = 1, False
        while True:
            while True:  # skip separators, reading on when the buffer runs out
                while pos < len(buffer) and buffer[pos] in " \t\r\n,":
                    pos += 1
                if pos < len(buffer) or eof:
                    break
                buffer, pos = handle.read(_CHUNK), 0
                eof = not buffer
            if pos >= len(buffer):
                raise VGError(f"{path}: the JSON array is not closed (truncated file?)")
            if buffer[pos] == "]":
                return
            try:
                element, end = decoder.raw_decode(buffer, pos)
            except json.JSONDecodeError as error:
                more = handle.read(max(_CHUNK, len(buffer) - pos))  # doubling: linear overall
                if not more:
                    raise VGError(f"{path}: malformed JSON: {error}") from None
                buffer, pos = buffer[pos:] + more, 0
                continue
            yield element
            pos = end


def read_image_sizes(vg_dir: Path) -> dict[int, tuple[int, int]]:
    """image_id -> (width, height) from ``image_data`` (small enough to hold: ~108K entries)."""
    path = find_file(vg_dir, "image_data")
    sizes = {}
    for record in iter_array(path):
        try:
            sizes[int(record["image_id"])] = (int(record["width"]), int(record["height"]))
        except (KeyError, TypeError, ValueError) as error:
            raise VGError(f"{path}: bad image record {str(record)[:120]}: {error}") from None
    return sizes


def iter_images(vg_dir: Path, limit: int | None = None) -> Iterator[VGImage]:
    """Yield each image with its objects (with attributes) and relationships.

    ``objects``, ``attributes`` and ``relationships`` must list images in the same order (as VG
    distributes them); a mismatch raises :class:`VGError` naming the image ids.
    """
    sizes = read_image_sizes(vg_dir)
    streams = {name: iter_array(find_file(vg_dir, name)) for name in FILES[1:]}
    for count, records in enumerate(itertools.zip_longest(*streams.values())):
        if limit is not None and count >= limit:
            return
        by_name = dict(zip(streams, records, strict=True))
        ended = [name for name, record in by_name.items() if record is None]
        if ended:
            raise VGError(
                f"{vg_dir}: {', '.join(ended)} ended after {count} images, before the "
                "other files (truncated or mismatched files?)"
            )
        ids = {name: _image_id(record, name) for name, record in by_name.items()}
        if len(set(ids.values())) != 1:
            raise VGError(f"{vg_dir}: files not in the same image order at record {count}: {ids}")
        image_id = ids["objects"]
        if image_id not in sizes:
            raise VGError(f"{vg_dir}: image {image_id} has no entry in image_data")
        try:
            image = build_image(image_id, sizes[image_id], by_name)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            what = f"missing key {error}" if isinstance(error, KeyError) else str(error)
            raise VGError(
                f"{vg_dir}: malformed record of image {image_id} in objects, attributes "
                f"or relationships ({type(error).__name__}: {what})"
            ) from None
        yield image


def _image_id(record: dict, name: str) -> int:
    try:
        return int(record.get("image_id", record.get("id")))
    except (TypeError, ValueError, AttributeError):
        raise VGError(f"{name}: record without image_id: {str(record)[:120]}") from None


def build_image(image_id: int, size: tuple[int, int], records: dict[str, dict]) -> VGImage:
    """Merge the per-image records of the three files into one :class:`VGImage`."""
    objects: dict[int, VGObject] = {}
    for raw in records["objects"].get("objects", []):
        _add_object(objects, raw)
    for raw in records["attributes"].get("attributes", []):
        obj = _add_object(objects, raw)
        for value in raw.get("attributes") or []:
            value = " ".join(str(value).lower().split())
            if value and value not in obj.attributes:
                obj.attributes.append(value)
    relationships = []
    for raw in records["relationships"].get("relationships", []):
        subject = _add_object(objects, raw["subject"])
        obj = _add_object(objects, raw["object"])
        relationships.append(
            VGRelationship(
                int(raw.get("relationship_id", -1)),
                str(raw.get("predicate", "")),
                subject.object_id,
                obj.object_id,
            )
        )
    return VGImage(image_id, size[0], size[1], objects, relationships)


def _add_object(objects: dict[int, VGObject], raw: dict) -> VGObject:
    """Insert (or complete) the object described by ``raw``; relationship endpoints use ``name``."""
    object_id = int(raw.get("object_id", raw.get("id")))
    names = raw.get("names") or ([raw["name"]] if raw.get("name") else [])
    existing = objects.get(object_id)
    if existing is None:
        existing = VGObject(
            object_id,
            list(names),
            list(raw.get("synsets") or []),
            float(raw.get("x", 0)),
            float(raw.get("y", 0)),
            float(raw.get("w", 0)),
            float(raw.get("h", 0)),
        )
        objects[object_id] = existing
    else:
        existing.names = existing.names or list(names)
        existing.synsets = existing.synsets or list(raw.get("synsets") or [])
    return existing
