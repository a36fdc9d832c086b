"""Fetch the authors' public BLA release zip, check every file against pinned sha256s, cache it.

``python -m builders release`` uses this when no local release is given or found: a fresh clone
needs nothing but network access once. The zip is downloaded to a temporary file beside its
cache place, every file the build reads is checked against ``builders/data/release_sha256.json``
(pinned in the repository), and only then renamed into place; a damaged or altered download is
refused and never cached. Offline, the error says where to put a zip fetched by other means.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

from bla_eval.outputs import atomic_file, remove_stale
from bla_eval.user_cache import user_cache
from tqdm.auto import tqdm

from builders.source import ReleaseError, ReleaseSource

RELEASE_URL = (
    "https://www.dropbox.com/scl/fi/kocjr2gk3hf667r53p10a/BLA_benchmark.zip"
    "?rlkey=dxi37fvx3bxhgrgr5ps9pp851&dl=1"
)
"""The zip linked from the README of https://github.com/shin-ee-chen/BLA (``dl=1``: the file
itself rather than Dropbox's page). ``$BLA_RELEASE_URL`` overrides it."""

URL_ENV = "BLA_RELEASE_URL"
ZIP_NAME = "BLA_benchmark.zip"
CHECKSUMS = Path(__file__).resolve().parent / "data" / "release_sha256.json"
"""Relative path inside the release -> sha256, for every annotation and image file the build
reads (generated once from the authors' release with :func:`pin_checksums`)."""

TIMEOUT_S = 60
CHUNK = 1 << 20


def release_url() -> str:
    """``$BLA_RELEASE_URL``, else :data:`RELEASE_URL`."""
    return os.environ.get(URL_ENV) or RELEASE_URL


def pinned_checksums() -> dict[str, str]:
    """The pinned sha256 of every release file the build reads."""
    return json.loads(CHECKSUMS.read_text(encoding="utf-8"))


def verify_release(path: Path) -> None:
    """Check every pinned file of the release zip or folder ``path`` (ReleaseError names the
    first file that is missing or differs)."""
    expected = pinned_checksums()
    with ReleaseSource(Path(path)) as source:
        for rel, sha in expected.items():
            if not source.exists(rel):
                raise ReleaseError(f"{source.describe(rel)}: missing (not the BLA release?)")
            digest = hashlib.sha256(source.read_bytes(rel)).hexdigest()
            if digest != sha:
                raise ReleaseError(
                    f"{source.describe(rel)}: sha256 {digest[:12]}... differs from the pinned "
                    f"{sha[:12]}... ({CHECKSUMS.name}): damaged or altered download, refused"
                )


def fetch_release(url: str | None = None, cache: Path | None = None, progress: bool = True) -> Path:
    """The checked release zip in the cache, downloaded from ``url`` first when absent.

    A zip already in the cache (downloaded earlier, or put there by hand) is checked too.
    """
    url = url or release_url()
    target = (cache or user_cache()) / ZIP_NAME
    if target.is_file():
        verify_release(target)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target.parent)  # a download cut off by a killed process
    with atomic_file(target, binary=True) as out:
        _download(url, out, target, progress)
        out.flush()
        verify_release(Path(out.name))
    return target


def _download(url: str, out, target: Path, progress: bool) -> None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(
                total=total, unit="B", unit_scale=True, desc="BLA release", disable=not progress
            ) as bar:
                for chunk in iter(lambda: response.read(CHUNK), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise ReleaseError(
            f"cannot download the BLA release from {url} ({reason}); offline, download "
            f"{ZIP_NAME} (linked from https://github.com/shin-ee-chen/BLA) yourself and put it "
            f"at {target}, or give --source with the release folder or zip"
        ) from None


def pin_checksums(release: Path) -> dict[str, str]:
    """sha256 of every file a build of ``release`` reads (to regenerate :data:`CHECKSUMS`)."""
    from builders.release import read_images, read_release

    with ReleaseSource(Path(release)) as source:
        read_images(source, read_release(source), progress=False)
        return dict(sorted(source.read_hashes.items()))
