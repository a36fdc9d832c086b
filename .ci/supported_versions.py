"""The "Supported versions" table of docs/development.md, read from the locks.

``python .ci/supported_versions.py`` prints the table; ``--write`` puts it into
docs/development.md between its two marker lines. Columns: the ``lowest`` environment
(``.ci/envs/lowest.lock``), the test environment (``.ci/locks/dev.txt``) and the ``newest``
environment (``.ci/envs/newest.lock``); tests/test_supported_versions.py checks that the page
holds this output.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / ".ci"))

from lock_inputs import ENVS, LOCKS, locked_versions  # noqa: E402

PAGE = ROOT / "docs" / "development.md"
BEGIN = "<!-- supported-versions: written by python .ci/supported_versions.py --write -->"
END = "<!-- /supported-versions -->"
PACKAGES = ("torch", "transformers", "datasets", "huggingface-hub", "gradio")
COLUMNS = (
    ("lowest tested", ENVS / "lowest.lock", ENVS / "lowest.txt"),
    ("locked", LOCKS / "dev.txt", ROOT / ".ci" / "lock"),
    ("newest tested", ENVS / "newest.lock", ENVS / "newest.txt"),
)
"""(header, lock, the file that names the lock's Python)."""


def python_of(source: Path) -> str:
    """The Python a lock is compiled for: ``#python X.Y`` of an environment's list, or the
    ``--python-version`` default of ``.ci/lock``."""
    text = source.read_text(encoding="utf-8")
    found = re.search(r"^#python (\S+)$", text, re.M) or re.search(
        r"--python-version (\d+\.\d+)", text
    )
    return found.group(1)


def table() -> str:
    """The Markdown table: one row per package, one column per lock."""
    rows = ["| package | " + " | ".join(header for header, _, _ in COLUMNS) + " |"]
    rows.append("|---|" + "---:|" * len(COLUMNS))
    rows.append("| Python | " + " | ".join(python_of(src) for _, _, src in COLUMNS) + " |")
    pins = [locked_versions(lock) for _, lock, _ in COLUMNS]
    for name in PACKAGES:
        rows.append(f"| {name} | " + " | ".join(p[name] for p in pins) + " |")
    return "\n".join(rows)


def written(page: str) -> str:
    """``page`` with the table between the markers replaced by the current one."""
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    return page[:start] + "\n" + table() + "\n" + page[end:]


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        PAGE.write_text(written(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    if argv:
        print("usage: python .ci/supported_versions.py [--write]", file=sys.stderr)
        return 2
    print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
