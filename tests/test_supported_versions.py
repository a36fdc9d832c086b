"""docs/development.md's "Supported versions" table is the one `.ci/supported_versions.py` writes
from the locks, and README's Install section links to it."""

from __future__ import annotations

import importlib.util

from tests.harness_envs import REPO_ROOT

_spec = importlib.util.spec_from_file_location(
    "supported_versions", REPO_ROOT / ".ci" / "supported_versions.py"
)
supported_versions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(supported_versions)


def test_the_page_holds_the_table_of_the_locks() -> None:
    page = supported_versions.PAGE.read_text(encoding="utf-8")
    assert supported_versions.written(page) == page
    table = supported_versions.table()
    assert f"{supported_versions.BEGIN}\n{table}\n{supported_versions.END}" in page


def test_the_table_reads_each_lock() -> None:
    rows = {
        line.split(" | ")[0].strip("| "): line.strip("| ").split(" | ")[1:]
        for line in supported_versions.table().splitlines()[2:]
    }
    assert rows["Python"] == ["3.10", "3.11", "3.13"]
    dev = supported_versions.locked_versions(REPO_ROOT / ".ci" / "locks" / "dev.txt")
    assert rows["torch"][1] == dev["torch"] and rows["gradio"][1] == dev["gradio"]
    assert set(rows) == {"Python", *supported_versions.PACKAGES}


def test_the_readme_install_section_links_the_table() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") : readme.index("## Quick starts")]
    assert "(docs/development.md#supported-versions)" in install
