"""The manifest: dataset version, row counts, and the sha256 of every file written and read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import pyarrow as pa

from bla_metric.schema import DATASET_VERSION

MANIFEST = "manifest.json"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def make_manifest(
    repo: Path,
    info: dict[str, dict[str, dict[str, int]]],
    source_hashes: dict[str, str],
    builder: str = "python -m builders release",
    extra: dict | None = None,
) -> dict:
    """The manifest of the repo at ``repo`` (every file except the manifest itself).

    The one manifest format of ``release`` and ``construct`` (``builder`` says which wrote it;
    ``extra`` adds builder-specific keys). ``built_with`` records the writer versions:
    byte-identical rebuilds are promised for the same source and the same library versions.
    """
    files = sorted(
        p
        for p in repo.rglob("*")
        if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")
    )
    return {
        **(extra or {}),
        "dataset_version": DATASET_VERSION,
        "builder": builder,
        "built_with": {"pyarrow": pa.__version__, "datasets": datasets.__version__},
        "configs": {
            c: {s: v["num_examples"] for s, v in splits.items()} for c, splits in info.items()
        },
        "files": {
            p.relative_to(repo).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
            for p in files
        },
        "source_files": dict(sorted(source_hashes.items())),
    }


def read_manifest(repo: Path) -> dict:
    """The manifest of a built repo (error names the folder when there is none)."""
    path = Path(repo) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(
            f"{repo} has no {MANIFEST}: build it with `python -m builders release` (or construct)"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    missing = [
        k
        for k in ("dataset_version", "builder", "files")
        if not isinstance(manifest, dict) or k not in manifest
    ]
    if missing:
        raise ValueError(
            f"{path} is not a manifest of `python -m builders` (no "
            f"{', '.join(missing)}): rebuild the folder"
        )
    return manifest


def verify_files(repo: Path, manifest: dict) -> list[str]:
    """Problems found comparing the files of ``repo`` with its manifest (empty list: all match)."""
    problems = []
    for rel, entry in manifest["files"].items():
        path = Path(repo) / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != entry["sha256"]:
            problems.append(f"{rel}: sha256 differs from the manifest (edited after the build?)")
    return problems
