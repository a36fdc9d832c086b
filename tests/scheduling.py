"""How the suite's tests are shared among pytest-xdist's workers (``-n 2`` in ``pyproject.toml``).

A test file is one unit of work, sent whole to one worker: its module-scoped fixtures (a Slurm or
Ray cluster, a finished run, a browser) are set up once, and no two workers start the same server.
The files of ``SPREAD`` are the exception: their tests are independent, each long, and go one by
one to whichever worker is free. Units go out in collection order, which
:func:`slow_files_first` makes the files with slow tests first, so that the long units start
early and the short ones fill in at the end.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

SPREAD = (
    "tests/test_version_tiers.py",
    "tests/bla_eval/scorers/test_architectures.py",
)
"""Files whose tests are scheduled one by one (no module fixture of theirs is costly)."""


class FileScheduling(LoadScopeScheduling):
    """Whole test files to a worker, but for the tests of ``SPREAD``, sent one at a time."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return nodeid if path in SPREAD else path


def slow_files_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: the files holding a ``slow`` test first, each file's tests in
    their own order."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)
