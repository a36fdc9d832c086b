"""What each lock is compiled from, and the hash of it that the lock's first line records.

``python .ci/lock_inputs.py LOCK`` prints the hash for a lock file (``.ci/locks/dev.txt``,
``.ci/locks/main.txt``, ``.ci/envs/<name>.lock``); ``--check`` lists the locks whose inputs
changed since they were written (exit 1), which ``tests/test_locks.py`` runs.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / ".ci" / "locks"
ENVS = ROOT / ".ci" / "envs"
HEADER = "# inputs-sha256: "


def project_requirements() -> str:
    """The dependency tables of ``pyproject.toml`` (its other settings do not change a lock)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    tables = {
        "dependencies": project.get("dependencies", []),
        "optional": project.get("optional-dependencies", {}),
        "python": project.get("requires-python", ""),
    }
    return json.dumps(tables, sort_keys=True)


def input_files(lock: Path) -> list[Path]:
    """The files a lock is compiled from (the lock script included)."""
    files = [ROOT / ".ci" / "lock"]
    if lock.parent == ENVS:  # its pins, and the overrides of its packages' own pins, if any
        overrides = ENVS / f"{lock.stem}.overrides"
        return [*files, ENVS / f"{lock.stem}.txt", *([overrides] if overrides.exists() else [])]
    name = lock.stem
    files += [LOCKS / f"{name}.in", LOCKS / "constraints.txt"]
    nodeps = LOCKS / f"{name}.nodeps.in"
    if nodeps.exists():
        files.append(nodeps)
    if name != "dev":
        files.append(LOCKS / "dev.txt")  # the other project locks take dev.txt's versions
    return files


def inputs_hash(lock: Path) -> str:
    """sha256 over the lock's input files (and ``pyproject.toml``'s dependencies)."""
    digest = hashlib.sha256()
    for path in input_files(lock):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    if lock.parent == LOCKS or installs_project(lock):
        digest.update(project_requirements().encode())
    return digest.hexdigest()


def installs_project(lock: Path) -> bool:
    """Whether a separate environment's list asks for the project (``-e .[...]``), whose
    ``pyproject.toml`` dependencies then are inputs of its lock."""
    pins = ENVS / f"{lock.stem}.txt"
    lines = pins.read_text(encoding="utf-8").splitlines() if pins.exists() else []
    return any(re.match(r"-e \.(\[|$)", line) for line in lines)


def all_locks() -> list[Path]:
    """Every lock the project keeps: the project's own and one per separate environment."""
    own = [LOCKS / f"{path.stem}.txt" for path in sorted(LOCKS.glob("*.in"))]
    own = [path for path in own if not path.stem.endswith(".nodeps")]
    return own + [ENVS / f"{path.stem}.lock" for path in sorted(ENVS.glob("*.txt"))]


def recorded_hash(lock: Path) -> str | None:
    """The inputs hash a lock's first line records (None when it has none or is missing)."""
    if not lock.exists():
        return None
    first = lock.read_text(encoding="utf-8").partition("\n")[0]
    return first[len(HEADER) :].strip() if first.startswith(HEADER) else None


def canonical(name: str) -> str:
    """A distribution's name as the index spells it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path) -> dict[str, str]:
    """Distribution name -> version pinned by a lock."""
    text = lock.read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", text, re.M)
    return {canonical(name): version for name, version in pins}


def stale_locks() -> list[Path]:
    """The locks whose inputs changed since they were written (or that are missing)."""
    return [lock for lock in all_locks() if recorded_hash(lock) != inputs_hash(lock)]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        stale = stale_locks()
        for lock in stale:
            print(f"{lock.relative_to(ROOT)} is out of date: run bash .ci/lock", file=sys.stderr)
        return 1 if stale else 0
    if len(argv) != 1:
        print("usage: python .ci/lock_inputs.py LOCK | --check", file=sys.stderr)
        return 2
    print(inputs_hash(Path(argv[0]).resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
