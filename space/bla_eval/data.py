"""Load one config and split of a dataset from a Hub id or a local dataset folder.

Images stay encoded (``datasets.Image(decode=False)``); benchmarks turn rows into items
(``bla_eval.benchmarks``) and the scoring loop decodes each distinct image once.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

from .outputs import content_hash as hash_files

DATASET_ENV = "BLA_DATASET"
"""Environment variable naming the default BLA dataset (a Hub id or a local folder)."""

LOCAL_DIR = "bla_dataset"
"""Folder, relative to the working directory, where ``python -m builders release`` writes."""


def local_build(folder: str | Path = LOCAL_DIR) -> Path | None:
    """``folder`` (relative to the working directory) when it holds a dataset build, else None."""
    path = Path(folder)
    return path.resolve() if (path / "data").is_dir() else None


def default_dataset(hub_id: str) -> str:
    """``$BLA_DATASET`` if set, else ``./bla_dataset`` when it holds a build, else ``hub_id``."""
    if os.environ.get(DATASET_ENV):
        return os.environ[DATASET_ENV]
    folder = local_build()
    return str(folder) if folder is not None else hub_id


def looks_like_path(name: str) -> bool:
    """True for what can only be a local path (absolute, ``./``, ``../``, ``~``, or existing)."""
    return name.startswith(("/", "./", "../", "~")) or Path(name).exists()


def check_dataset(data: str) -> None:
    """A ValueError naming ``data`` unless it is a local folder or a Hub dataset id
    (``org/name``): a file, a path, or a bare name that is no folder here (``aro_dataset``
    before it is built) is never looked up on the Hub."""
    if Path(data).is_dir():
        return
    if Path(data).exists():
        raise ValueError(f"dataset {data} is a file, not a folder (give a folder or a Hub id)")
    if looks_like_path(data) or data.count("/") != 1 or data.startswith("/"):
        raise ValueError(
            f"dataset folder {data} does not exist (give a folder, or a Hub id as org/name)"
        )


def content_hash(data: str) -> str | None:
    """SHA-256 over every parquet file of a local dataset folder (names relative to it, hidden
    entries left out): what a run reads from it, so that a resume after the folder was rebuilt
    in place is refused (``run.json``'s ``data_sha256``). None for a Hub id (its revision
    identifies it). Computed once per process for files of the same sizes and times."""
    if not Path(data).is_dir():
        return None
    root = Path(data).resolve()
    files = sorted(
        p
        for p in root.rglob("*.parquet")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    stamp = tuple((f.as_posix(), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    return _hash_of(root, stamp)


@functools.lru_cache(maxsize=8)
def _hash_of(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    return hash_files([Path(name) for name, _, _ in stamp], root)


def load_split(data: str, config: str, split: str = "test", columns: Sequence[str] = ()):
    """One config and split as a ``datasets.Dataset``, ``columns`` checked, images left encoded."""
    import datasets

    if Path(data).is_dir():
        # Local folders go through the parquet builder: its cache key includes the files' metadata,
        # whereas a folder's cache key does not distinguish two folders of the same name.
        files = _local_files(data, config, split)
        _check_parquet(files)
        try:
            ds = datasets.load_dataset("parquet", data_files={split: files})[split]
        except (OSError, ValueError, datasets.exceptions.DatasetGenerationError) as err:
            raise ValueError(
                f"cannot read dataset {data!r} config {config!r} ({', '.join(files)}): "
                f"{_cause(err)}"
            ) from err
    else:
        check_dataset(data)
        try:
            ds = datasets.load_dataset(data, config, split=split)
        except (OSError, ConnectionError) as err:
            raise ValueError(f"cannot load dataset {data!r} config {config!r}: {err}") from err
    if len(ds) == 0:
        raise ValueError(f"dataset {data!r} config {config!r} split {split!r} has no rows")
    missing = [c for c in columns if c not in ds.column_names]
    if missing:
        raise ValueError(
            f"dataset {data!r} config {config!r} lacks the field(s) {', '.join(missing)} "
            f"(has {', '.join(ds.column_names)})"
        )
    for name, feature in ds.features.items():
        if isinstance(feature, datasets.Image):
            ds = ds.cast_column(name, datasets.Image(decode=False))
    return ds


def _local_files(data: str, config: str, split: str) -> list[str]:
    """Parquet files of one config and split in a local dataset folder (``data/<config>/`` layout,
    else the folder's dataset card)."""
    import datasets

    files = sorted(str(f) for f in (Path(data) / "data" / config).glob(f"{split}-*.parquet"))
    if not files:
        try:
            builder = datasets.load_dataset_builder(data, config)
        except ValueError as err:
            raise ValueError(f"dataset {data!r} has no config {config!r}: {err}") from err
        files = list((builder.config.data_files or {}).get(split) or [])
    if not files:
        raise ValueError(f"dataset {data!r} config {config!r} has no split {split!r}")
    return files


def _check_parquet(files: Sequence[str]) -> None:
    """Each parquet file readable (its footer) and with rows; a ValueError names the first
    file that is not (damaged pages are named by :func:`load_split` when they are read)."""
    import pyarrow.parquet as pq

    for name in files:
        try:
            rows = pq.ParquetFile(name).metadata.num_rows
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise ValueError(f"{name} is not a readable parquet file: {_cause(err)}") from None
        if rows == 0:
            raise ValueError(f"{name} has no rows: the dataset config is empty")


def _cause(err: BaseException) -> str:
    """The innermost message of a chain of exceptions, on one line."""
    while err.__cause__ is not None:
        err = err.__cause__
    return " ".join(str(err).split()) or type(err).__name__
