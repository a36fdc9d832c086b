"""Deterministic, crash-safe writing: parquet, JSON, and moving a finished folder into place."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from builders.schema import FEATURES

ROW_GROUP_SIZE = 100
"""Rows per parquet row group (fixed, so the file layout never depends on the machine)."""

BUILD_MARKER = "manifest.json"
"""A folder holding this file is a previous build and may be replaced."""


def write_parquet(rows: list[dict], path: Path) -> int:
    """Write ``rows`` (dicts with the FEATURES columns) to ``path`` as deterministic parquet.

    Returns the arrow size of the table as read back, the ``num_bytes`` of the card.
    The arrow schema carries the ``huggingface`` metadata of FEATURES, so ``datasets`` reads the
    ``image`` column back as an Image feature. No timestamps are written; the row group size is
    fixed.
    """
    schema = FEATURES.arrow_schema
    table = pa.Table.from_pylist(rows, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        row_group_size=ROW_GROUP_SIZE,
        compression="snappy",
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


def check_replaceable(out: Path) -> None:
    """Refuse to replace ``out`` unless it is absent, holds only hidden files, or is a build."""
    if not out.exists():
        return
    if not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a folder")
    visible = [p.name for p in out.iterdir() if not p.name.startswith(".")]
    if visible and not (out / BUILD_MARKER).is_file():
        raise FileExistsError(
            f"--out {out} holds files that are not a BLA build ({', '.join(sorted(visible)[:5])}); "
            "choose an empty or new folder"
        )


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``out``: on success it replaces ``out``, on error it goes.

    Hidden files already in ``out`` (e.g. the repo's ``.gitignore``) are carried over. ``out`` is
    untouched until everything was written; the swap itself is two renames on the same file system.
    """
    check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    stage.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the repo folder should not be
    try:
        yield stage
        if out.exists():
            for hidden in out.iterdir():
                if hidden.name.startswith(".") and not (stage / hidden.name).exists():
                    _copy(hidden, stage / hidden.name)
        _swap_into_place(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst)


def _swap_into_place(stage: Path, out: Path) -> None:
    if not out.exists():
        stage.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        stage.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
