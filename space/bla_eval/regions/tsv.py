"""The authors' region-feature file: LXMERT's TSV layout, read directly.

One line per image, tab-separated, in the columns of :data:`COLUMNS`; ``boxes`` and
``features`` are base64 float32 arrays ``[num_boxes, 4]`` (pixels, ``x1, y1, x2, y2``) and
``[num_boxes, D]``. ``img_id`` is the dataset's ``image_id``. The file is indexed once (each
line's place, its ``img_id``) and hashed in the same pass; a line is decoded when its image is
asked for. Every error is one line naming the file and the row.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import threading
from pathlib import Path

import numpy as np

from ..outputs import open_regular
from .features import RegionFeatures

COLUMNS = (
    "img_id",
    "img_h",
    "img_w",
    "objects_id",
    "objects_conf",
    "attrs_id",
    "attrs_conf",
    "num_boxes",
    "boxes",
    "features",
)
"""The columns of a line, in order (LXMERT's ``FIELDNAMES``)."""
MAX_LINE = 64 << 20
"""The longest line read, in bytes (36 boxes of 2048 floats take about 400 KB)."""
MAX_BOXES = 1000
"""The most boxes of one image."""
MAX_SIDE = 100_000
"""The largest image side, in pixels."""
MAX_ID = 200
"""The longest ``img_id``, in characters."""
CHUNK = 1 << 20


class RegionTable:
    """The region features of a TSV file in LXMERT's layout, looked up by ``img_id``.

    ``sha256`` is the file's content hash (``run.json`` records it); lines are decoded on
    lookup (threads may look up at once)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.rows: dict[str, tuple[int, int, int]] = {}
        """img_id -> (row number from 1, byte offset, length)."""
        self.sha256 = self._index()
        self._fd = open_regular(self.path)
        self._lock = threading.Lock()

    def _error(self, row: int, message: str) -> ValueError:
        return ValueError(f"regions file {self.path} row {row}: {message}")

    def _index(self) -> str:
        digest = hashlib.sha256()
        try:
            fd = open_regular(self.path)
        except OSError as err:
            raise ValueError(
                f"cannot read regions file {self.path}: {err.strerror or err}"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            offset, row = 0, 0
            while line := handle.readline(MAX_LINE + 1):
                row += 1
                digest.update(line)
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    raise self._error(row, f"longer than {MAX_LINE} bytes")
                self._index_line(row, offset, line)
                offset += len(line)
        if not self.rows:
            raise ValueError(f"regions file {self.path} holds no rows")
        return digest.hexdigest()

    def _index_line(self, row: int, offset: int, line: bytes) -> None:
        if not line.strip():
            return
        image_id = line.split(b"\t", 1)[0]
        try:
            key = image_id.decode("ascii").strip()
        except UnicodeDecodeError:
            raise self._error(row, "img_id is not ASCII text") from None
        if not key or len(key) > MAX_ID or not key.isprintable():
            raise self._error(row, f"img_id must be 1-{MAX_ID} printable characters")
        if key in self.rows:
            raise self._error(row, f"img_id {key!r} repeats row {self.rows[key][0]}")
        self.rows[key] = (row, offset, len(line))

    def __contains__(self, image_id: str) -> bool:
        return image_id in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, image_id: str) -> RegionFeatures:
        """The regions of the image ``img_id`` (a KeyError names the file when it has none)."""
        if image_id not in self.rows:
            raise KeyError(f"regions file {self.path} has no row for image_id {image_id!r}")
        row, offset, length = self.rows[image_id]
        line = os.pread(self._fd, length, offset)
        return self.parse(row, line)

    def parse(self, row: int, line: bytes) -> RegionFeatures:
        """The regions of one line (a ValueError names the file, the row and the column)."""
        cells = line.rstrip(b"\r\n").split(b"\t")
        if len(cells) != len(COLUMNS):
            raise self._error(row, f"has {len(cells)} columns, not {len(COLUMNS)}")
        doc = dict(zip(COLUMNS, cells, strict=True))
        height = self._int(row, doc, "img_h", 1, MAX_SIDE)
        width = self._int(row, doc, "img_w", 1, MAX_SIDE)
        count = self._int(row, doc, "num_boxes", 1, MAX_BOXES)
        boxes = self._array(row, doc, "boxes", count).reshape(count, 4)
        features = self._array(row, doc, "features", count)
        try:
            return RegionFeatures(features.reshape(count, -1), boxes, (height, width))
        except ValueError as err:
            raise self._error(row, str(err)) from None

    def _int(self, row: int, doc: dict[str, bytes], column: str, low: int, high: int) -> int:
        text = doc[column].strip()
        if not text.isdigit() or not low <= int(text) <= high:
            raise self._error(row, f"{column} must be an integer in [{low}, {high}]")
        return int(text)

    def _array(self, row: int, doc: dict[str, bytes], column: str, count: int) -> np.ndarray:
        try:
            raw = base64.b64decode(doc[column], validate=True)
        except (binascii.Error, ValueError):
            raise self._error(row, f"{column} is not base64") from None
        if len(raw) % (4 * count) or not raw:
            raise self._error(row, f"{column} holds {len(raw)} bytes: not {count} rows of float32")
        values = np.frombuffer(raw, dtype=np.float32)
        if column == "boxes" and values.size != 4 * count:
            raise self._error(row, f"boxes holds {values.size} numbers, not {4 * count}")
        return values

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __del__(self) -> None:
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            os.close(fd)


def encode_row(image_id: str, regions: RegionFeatures) -> str:
    """One line of the TSV layout (no newline) for ``regions``; the object and attribute
    columns hold zeros (the models read boxes and features only)."""
    count = regions.count
    zeros_i = base64.b64encode(np.zeros(count, np.int64).tobytes()).decode()
    zeros_f = base64.b64encode(np.zeros(count, np.float32).tobytes()).decode()
    height, width = regions.image_size
    cells = [
        image_id,
        str(height),
        str(width),
        zeros_i,
        zeros_f,
        zeros_i,
        zeros_f,
        str(count),
        base64.b64encode(regions.boxes.astype(np.float32).tobytes()).decode(),
        base64.b64encode(regions.features.astype(np.float32).tobytes()).decode(),
    ]
    return "\t".join(cells)
