"""Deterministic, crash-safe writing: parquet, JSON, and moving a finished folder into place."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from bla_eval.outputs import output_path, staged

from builders.schema import FEATURES

ROW_GROUP_SIZE = 100
"""Rows per parquet row group (fixed, so the file layout never depends on the machine)."""

BUILD_MARKER = "manifest.json"
"""The manifest a build writes; with its ``builder`` and ``files`` it marks a folder as ours."""

BUILDER_PREFIX = "python -m builders "
"""Every manifest of ours names its builder ``python -m builders <subcommand>`` (release,
construct, and the neighbouring benchmarks' builders; see ``manifest.make_manifest``)."""


def data_file(config: str, split: str) -> str:
    """Path of one split's parquet file inside the dataset repo."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def write_parquet(
    rows: list[dict],
    path: Path,
    features: datasets.Features = FEATURES,
    compression: str = "snappy",
) -> int:
    """Write ``rows`` (dicts with the ``features`` columns) to ``path`` as deterministic parquet.

    Returns the arrow size of the table as read back, the ``num_bytes`` of the card.
    The arrow schema carries the ``huggingface`` metadata of ``features`` (default: BLA's
    FEATURES; the neighbouring benchmarks pass their own), so ``datasets`` reads the ``image``
    column back as an Image feature. No timestamps are written; the row group size is
    fixed. ``compression``: parquet's codec (snappy; the per-sentence configs take zstd).
    """
    schema = features.arrow_schema
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


def own_files(out: Path) -> set[str] | None:
    """The files a previous build of ours lists in ``out/manifest.json`` (None: not our build).

    Ours means: the manifest is a JSON object whose ``builder`` starts with
    :data:`BUILDER_PREFIX` (or the older ``"kind": "construct"``) and whose ``files`` maps
    relative paths to checksums.
    """
    try:
        manifest = json.loads((out / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return None
    builder = manifest.get("builder")
    ours = isinstance(builder, str) and builder.startswith(BUILDER_PREFIX)
    if not ours and manifest.get("kind") != "construct":
        return None
    return {str(name) for name in manifest["files"]} | {BUILD_MARKER}


def unknown_entries(out: Path) -> list[str]:
    """Paths under ``out`` a replacement would lose: everything a build of ours did not write.

    Hidden entries at the top (``.gitignore``, ``.git``) are carried over, so they never count;
    folders count only through the files inside them.
    """
    listed = own_files(out)
    unknown = []
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if rel.split("/")[0].startswith(".") or (path.is_dir() and not path.is_symlink()):
            continue
        if listed is None or rel not in listed:
            unknown.append(rel)
    return unknown


def built_by(out: Path) -> str | None:
    """The ``builder`` named in ``out/manifest.json`` (None when there is none to read)."""
    try:
        manifest = json.loads((out / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    builder = manifest.get("builder") if isinstance(manifest, dict) else None
    if builder is None and isinstance(manifest, dict) and manifest.get("kind") == "construct":
        return "python -m builders construct"
    return builder if isinstance(builder, str) else None


def check_replaceable(out: Path, builder: str | None = None) -> None:
    """Refuse to replace ``out`` unless it is absent, or holds nothing but a build of ours.

    A build of ours is a folder whose ``manifest.json`` we wrote and which holds no file besides
    those the manifest lists (plus hidden entries at its top, which are carried over). Anything
    else is refused with the names of what is there; nothing is ever deleted. With ``builder``
    (e.g. ``"python -m builders construct"``), a build of another subcommand is refused too.
    """
    output_path(out)  # refuses a symbolic link, the working directory and its parents
    if not out.exists():
        return
    if not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a folder")
    unknown = unknown_entries(out)
    if not unknown:
        previous = built_by(out)
        if builder is not None and previous is not None and previous != builder:
            raise FileExistsError(
                f"--out {out} holds a build of `{previous}`; `{builder}` replaces only its own "
                "builds: choose another folder"
            )
        return
    shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
    if own_files(out) is None:
        raise FileExistsError(
            f"--out {out} is not a build of ours (no manifest.json written by `python -m builders`)"
            f" and holds {shown}; choose an empty or new folder"
        )
    raise FileExistsError(
        f"--out {out} holds files its manifest.json does not list ({shown}); move them away or "
        "choose another folder"
    )


@contextmanager
def staged_folder(out: Path, builder: str | None = None) -> Iterator[Path]:
    """Yield a staging folder beside ``out``: on success it replaces ``out``, on error it goes.

    Hidden files already in ``out`` (e.g. the repo's ``.gitignore``) are carried over. ``out`` is
    untouched until everything was written; :func:`check_replaceable` runs before and again
    right before the swap (two renames on the same file system).
    """
    with staged(out, check=lambda target: check_replaceable(target, builder)) as stage:
        yield stage
        if out.is_dir():
            for hidden in out.iterdir():
                if hidden.name.startswith(".") and not (stage / hidden.name).exists():
                    _copy(hidden, stage / hidden.name)


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)  # a link is carried as a link
