"""The general item model: one or more images, any number of captions, and what is true.

Every benchmark reads its dataset into :class:`Item` objects; the engine scores each (image,
caption) pair of an item and writes one score record per item. BLA items have one image and four
captions; Winoground items two images and two captions; VALSE items one image, a caption and a foil.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image


@dataclass(frozen=True)
class ImageRef:
    """One image of an item: a key shared by every item that shows the same image, and where the
    encoded image is (``{"bytes": ..., "path": ...}`` as ``datasets.Image(decode=False)`` gives)."""

    key: str
    source: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Item:
    """One benchmark item. ``labels[i][j]`` is 1 when caption ``j`` is true of image ``i``."""

    benchmark: str
    task: str
    id: str
    images: tuple[ImageRef, ...]
    captions: tuple[str, ...]
    labels: tuple[tuple[int, ...], ...]
    caption_types: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.images:
            raise ValueError(f"{self.task} item {self.id}: no image")
        if len(self.labels) != len(self.images) or any(
            len(row) != len(self.captions) for row in self.labels
        ):
            raise ValueError(
                f"{self.task} item {self.id}: labels must have one row per image and one column "
                f"per caption ({len(self.images)} x {len(self.captions)})"
            )


def image_key(row: Mapping[str, Any], image_id: Any = None) -> str:
    """A key naming the image of a dataset row: its id when there is one, else a content hash."""
    if image_id not in (None, ""):
        return f"id:{image_id}"
    image = row or {}
    if image.get("bytes"):
        return "sha1:" + hashlib.sha1(image["bytes"]).hexdigest()
    return f"path:{image.get('path')}"


BLANK_OF = "blank_of"
"""An image source with this key is a blank image: the original's size and mean colour (the
``blank`` control of ``bla_eval.controls``); its value is the original's source."""


def blank_like(image: Image.Image) -> Image.Image:
    """An RGB image of ``image``'s size filled with its mean colour (rounded per channel)."""
    from PIL import Image, ImageStat

    rgb = image.convert("RGB")
    colour = tuple(int(round(v)) for v in ImageStat.Stat(rgb).mean)
    return Image.new("RGB", rgb.size, colour)


def decode_image(item: Item, ref: ImageRef) -> Image.Image:
    """An image of ``item`` as RGB; an error names the item when it is missing or broken."""
    from PIL import Image

    source = ref.source or {}
    if BLANK_OF in source:
        original = ImageRef(str(source.get("key")), source[BLANK_OF])
        return blank_like(decode_image(item, original))
    try:
        if source.get("bytes"):
            image = Image.open(io.BytesIO(source["bytes"]))
        elif source.get("path"):
            image = Image.open(source["path"])
        else:
            raise FileNotFoundError("no image bytes or path")
        return image.convert("RGB")
    except (OSError, ValueError) as err:
        raise ValueError(
            f"image of {item.task} item {item.id} ({ref.key}) cannot be read: {err}"
        ) from err


def encoded_image(item: Item, ref: ImageRef) -> bytes:
    """The encoded bytes of an image of ``item`` as stored (not decoded); an error names the
    item when they are missing."""
    source = ref.source or {}
    if BLANK_OF in source:  # encoded as PNG (lossless: the mean colour is exact)
        blank = decode_image(item, ref)
        buffer = io.BytesIO()
        blank.save(buffer, format="PNG")
        return buffer.getvalue()
    try:
        if source.get("bytes"):
            return bytes(source["bytes"])
        if source.get("path"):
            with open(source["path"], "rb") as handle:
                return handle.read()
        raise FileNotFoundError("no image bytes or path")
    except OSError as err:
        raise ValueError(
            f"image of {item.task} item {item.id} ({ref.key}) cannot be read: {err}"
        ) from err


@dataclass(frozen=True)
class ImageHandle:
    """One image of an item as a scorer that looks images up takes it (``wants_handle``): its
    key, the dataset's image id where the key is one, its bytes or decoded image on demand."""

    item: Item
    ref: ImageRef

    @property
    def key(self) -> str:
        """The image's key (shared by every item that shows it)."""
        return self.ref.key

    @property
    def image_id(self) -> str | None:
        """The dataset's ``image_id`` of the image (None: the key is a hash or a control's)."""
        return self.ref.key[3:] if self.ref.key.startswith("id:") else None

    def encoded(self) -> bytes:
        """The image's bytes as stored (:func:`encoded_image`)."""
        return encoded_image(self.item, self.ref)

    def decoded(self) -> Image.Image:
        """The image as RGB (:func:`decode_image`)."""
        return decode_image(self.item, self.ref)


def as_record_value(matrix: Sequence[Sequence[Any]]) -> list[Any]:
    """A matrix as stored in ``scores.jsonl``: the single row of a one-image item, else rows."""
    rows = [list(row) for row in matrix]
    return rows[0] if len(rows) == 1 else rows
