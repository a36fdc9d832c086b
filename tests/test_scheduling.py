"""How the suite is shared among pytest-xdist's workers (``tests/scheduling.py``)."""

from __future__ import annotations

from types import SimpleNamespace

from tests.harness_envs import REPO_ROOT
from tests.scheduling import SPREAD, FileScheduling, slow_files_first


def test_every_spread_file_exists():
    """A renamed file would silently go back to being one unit of work."""
    assert [path for path in SPREAD if not (REPO_ROOT / path).is_file()] == []


def test_a_file_is_one_unit_but_a_spread_file_s_tests_are_one_each():
    split = FileScheduling.__new__(FileScheduling)._split_scope
    assert split("tests/bla_metric/test_bla.py::test_ties[a]") == "tests/bla_metric/test_bla.py"
    spread = f"{SPREAD[0]}::test_x[lowest-3.10]"
    assert split(spread) == spread


def test_files_with_a_slow_test_come_first_in_their_own_order():
    def item(path: str, slow: bool = False) -> SimpleNamespace:
        return SimpleNamespace(path=path, get_closest_marker=lambda name: slow or None)

    items = [item("a"), item("b"), item("b", slow=True), item("c"), item("d", slow=True)]
    order = [id(i) for i in items[1:3]] + [id(items[4]), id(items[0]), id(items[3])]
    slow_files_first(items)
    assert [id(i) for i in items] == order
