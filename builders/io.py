"""Deterministic, crash-safe writing: parquet, JSON, and moving a finished folder into place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from bla_eval.outputs import staged

from bla_metric.schema import BLA_ROWS

ROW_GROUP_SIZE = 100
"""Rows per parquet row group (fixed, so the file layout never depends on the machine)."""


def data_file(config: str, split: str) -> str:
    """Path of one split's parquet file inside the dataset repo."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def write_parquet(
    rows: list[dict],
    path: Path,
    features: datasets.Features | None = None,
    compression: str = "snappy",
) -> int:
    """Write ``rows`` (dicts with the ``features`` columns) to ``path`` as deterministic parquet.

    Returns the arrow size of the table as read back, the ``num_bytes`` of the card.
    The arrow schema carries the ``huggingface`` metadata of ``features`` (default: BLA's
    rows, ``BLA_ROWS``; the other benchmarks pass their own), so ``datasets`` reads the ``image``
    column back as an Image feature. No timestamps are written; the row group size is
    fixed. ``compression``: parquet's codec (snappy; the per-sentence configs take zstd).
    """
    schema = (features or BLA_ROWS.features()).arrow_schema
    table = pa.Table.from_pylist(rows, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        row_group_size=ROW_GROUP_SIZE,
        compression=compression,
        use_dictionary=True,
        write_statistics=True,
    )
    return pq.read_table(path).nbytes  # as read back (one chunk per row group)


def dump_json(obj: object) -> str:
    """JSON text with sorted keys and a trailing newline (the same bytes for the same object)."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 text with Unix newlines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


@contextmanager
def staged_folder(out: Path, builder: str) -> Iterator[Path]:
    """Yield a staging folder beside ``out``: on success it replaces ``out`` marked as
    ``builder``'s output (``bla_eval.outputs``), on error it goes.

    Only a folder ``builder`` wrote is replaced (``check_replaceable``, before and again right
    before the swap); hidden entries already in ``out`` (the repo's ``.gitignore``, ``.git``) are
    carried over.
    """
    with staged(out, builder, keep_hidden=True) as stage:
        yield stage
