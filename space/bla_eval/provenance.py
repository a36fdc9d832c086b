"""Where a run's numbers come from: library versions, the lock the environment was installed
from, the project's git commit, device, dtype, the model's revision and content hash
(``results.json``'s ``provenance``)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = (
    "bla-benchmark",
    "numpy",
    "torch",
    "transformers",
    "datasets",
    "pillow",
    "open_clip_torch",
    "accelerate",
    "llama_cpp_python",
    "vllm",
)
"""Distributions whose versions a run records (those installed)."""


def library_versions() -> dict[str, str]:
    """{distribution: version} of :data:`LIBRARIES` that are installed, and Python's."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


LOCK_MARKER = ".bla-lock.json"
"""The file in an environment's folder that names the lock it was installed from, written by
the clone's set-up (``.ci/setup``, ``.ci/build-env``): ``{"lock": its path, "sha256": ...}``."""


def environment_lock(prefix: Path | None = None) -> dict[str, str] | None:
    """``{"lock", "sha256"}`` of the lock this environment was installed from (None for an
    environment the clone's set-up did not make)."""
    marker = Path(prefix or sys.prefix) / LOCK_MARKER
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    fields = {key: record.get(key) for key in ("lock", "sha256")}
    if not all(isinstance(value, str) and value for value in fields.values()):
        return None
    return fields


def git_commit(start: Path | None = None) -> dict[str, Any] | None:
    """{"commit", "dirty"} of the git clone the engine runs from (None when it is installed from
    a package, or git is missing)."""
    folder = (start or Path(__file__)).resolve().parent
    root = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)
    if root is None:
        return None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if commit.returncode != 0:
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def provenance(
    model: Any, scorer: Any, device: str, dtype: str | None, revision: str | None
) -> dict[str, Any]:
    """The provenance record of a run: ``libraries``, ``lock`` (the environment's lock, None
    outside an environment of the clone's set-up), ``git`` (None outside a clone),
    ``device``, ``dtype`` (the loaded model's where known), ``model_revision`` (the Hub commit)
    and ``model_content_hash`` (of a local model, where the resolved model carries one)."""
    loaded = getattr(getattr(scorer, "model", None), "dtype", None)
    return {
        "libraries": library_versions(),
        "lock": environment_lock(),
        "git": git_commit(),
        "device": str(getattr(scorer, "device", device)),
        "dtype": str(loaded).replace("torch.", "") if loaded is not None else dtype,
        "model_revision": revision or getattr(model, "revision", None),
        "model_content_hash": getattr(model, "content_hash", None),
    }
