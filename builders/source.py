"""Read the BLA release as users have it: the unpacked folder or the downloaded zip file.

Every file read is hashed, so the manifest can list the sha256 of each source file.
"""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from bla_eval.outputs import parse_json

MARKER = "annotations/active_passive_captions.json"
"""A file every release has; its location finds the release root inside a folder or zip."""


class ReleaseError(ValueError):
    """The release is missing, malformed or breaks a BLA rule (the message names the record)."""


class ReleaseSource:
    """Files of one release, by path relative to the release root (``annotations/...``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.kind = "zip" if self.path.is_file() else "folder"
        self.read_hashes: dict[str, str] = {}
        if not self.path.exists():
            raise ReleaseError(
                f"release not found: {self.path} (give the BLA release folder or zip with "
                "--source; it is published with https://github.com/shin-ee-chen/BLA)"
            )
        if self.kind == "zip":
            if not zipfile.is_zipfile(self.path):
                raise ReleaseError(f"{self.path} is neither a folder nor a zip file")
            try:
                self._zip = zipfile.ZipFile(self.path)
            except (zipfile.BadZipFile, OSError, ValueError) as err:
                raise ReleaseError(f"{self.path} is a damaged zip file: {err}") from None
            self._names = {n for n in self._zip.namelist() if not n.endswith("/")}
            self._prefix = self._find_prefix(self._names)
        else:
            self._root = self._find_root(self.path)

    def __enter__(self) -> ReleaseSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the zip file, if any."""
        if self.kind == "zip":
            self._zip.close()

    def describe(self, rel: str) -> str:
        """A human-readable location of ``rel`` (for error messages)."""
        if self.kind == "zip":
            return f"{self.path}!{self._prefix}{rel}"
        return str(self._root / rel)

    def exists(self, rel: str) -> bool:
        """Whether the release holds the file ``rel``."""
        if self.kind == "zip":
            return self._prefix + rel in self._names
        return (self._root / rel).is_file()

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of ``rel``; records its sha256 for the manifest."""
        if not self.exists(rel):
            raise ReleaseError(f"missing file in the release: {self.describe(rel)}")
        try:
            if self.kind == "zip":
                data = self._zip.read(self._prefix + rel)
            else:
                data = (self._root / rel).read_bytes()
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as err:
            raise ReleaseError(
                f"{self.describe(rel)} cannot be read (damaged release?): {err}"
            ) from None
        self.read_hashes[rel] = hashlib.sha256(data).hexdigest()
        return data

    def read_json(self, rel: str) -> object:
        """Parse ``rel`` as JSON, bounded and each object's keys once (``parse_json``; errors
        name the file)."""
        data = self.read_bytes(rel)
        try:
            return parse_json(data.decode("utf-8"), unique_keys=True)
        except ValueError as err:  # JSONDecodeError, or bytes that are not UTF-8
            raise ReleaseError(f"{self.describe(rel)} is not valid JSON: {err}") from None

    @staticmethod
    def _find_root(folder: Path) -> Path:
        if (folder / MARKER).is_file():
            return folder
        children = [c for c in folder.iterdir() if c.is_dir() and (c / MARKER).is_file()]
        if len(children) == 1:
            return children[0]
        raise ReleaseError(f"{folder} is not a BLA release: no {MARKER} (nor in one subfolder)")

    def _find_prefix(self, names: set[str]) -> str:
        roots = sorted(n[: -len(MARKER)] for n in names if n.endswith(MARKER))
        roots = [r for r in roots if r == "" or r.endswith("/")]
        if not roots:
            raise ReleaseError(f"{self.path} is not a BLA release zip: no {MARKER} inside")
        prefix = min(roots, key=lambda r: len(PurePosixPath(r).parts))
        if any(
            len(PurePosixPath(r).parts) == len(PurePosixPath(prefix).parts)
            for r in roots
            if r != prefix
        ):
            raise ReleaseError(f"{self.path} holds several releases: {', '.join(roots)}")
        return prefix
