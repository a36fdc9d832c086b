"""The one registry type: lazy ``module:attr`` entries imported on first lookup, a built-in entry
restored when its replacement is unregistered, aliases, refused repeats, one error line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import pytest

from bla_metric.registry import Registry, load


@dataclass(frozen=True)
class Spec:
    name: str
    other: str = ""


def test_a_lazy_entry_is_imported_on_first_lookup_only():
    """Listing names imports nothing; the lookup imports the module (a fresh interpreter)."""
    code = (
        "import sys; from bla_metric.registry import Registry\n"
        "r = Registry('thing', lazy={'dump': 'pickletools:dis'})\n"
        "assert r.names() == ['dump'] and 'dump' in r and 'pickletools' not in sys.modules\n"
        "import pickletools; assert r['dump'] is pickletools.dis\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_unregistering_a_replacement_restores_the_builtin_entry():
    builtin = Spec("a")
    registry = Registry("thing", (builtin,), {"b": "bla_metric.registry:load"})
    mine, other = Spec("a", "mine"), Spec("c")
    registry.register(mine)
    registry.register(other)
    assert registry.names() == ["a", "b", "c"] and registry.require("a") is mine
    assert registry.builtin_names() == ["a", "b"]
    registry.unregister("a")
    registry.unregister("c")
    registry.register(Spec("b"))
    registry.unregister("b")
    assert registry.names() == ["a", "b"] and registry["a"] is builtin and registry["b"] is load


def test_aliases_find_an_entry_and_unique_names_are_refused():
    registry = Registry("thing", aliases=lambda s: (s.other,), unique=True, hint=" or another")
    first = registry.register(Spec("a", "alpha"))
    assert registry.require("alpha") is first and "alpha" not in registry
    with pytest.raises(ValueError, match="thing 'alpha' is registered already"):
        registry.register(Spec("b", "alpha"))
    with pytest.raises(ValueError, match="^unknown thing 'z': use one of a or another$"):
        registry.require("z")


def test_a_path_without_its_attribute_is_refused():
    with pytest.raises(ValueError, match="'bla_metric.registry' is not a module:attr path"):
        load("bla_metric.registry")
