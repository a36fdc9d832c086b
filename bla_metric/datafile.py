"""The YAML files of ``bla_metric/data/`` (published numbers), read and checked.

:func:`read` parses one file into an :class:`Entry`; an entry's accessors check the shape of what
they return, so a malformed value raises ``ValueError("<file>: <entry>: <problem>")``, naming the
file and the place of the value in it (``table2['CLIP'][1]``). Needs only PyYAML.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

DATA = resources.files(__package__) / "data"
"""The folder of the data files (``bla_metric/data``, package data of the wheel)."""


@dataclass(frozen=True)
class Entry:
    """One value of a data file and where it is."""

    file: str
    where: str
    """The keys and indices from the top (``table2['CLIP'][1]``; empty at the top)."""
    value: Any

    def error(self, problem: str) -> ValueError:
        """``ValueError("<file>: <entry>: <problem>")``."""
        return ValueError(f"{self.file}: {self.where or 'top level'}: {problem}")

    def _child(self, key: str | int, value: Any) -> Entry:
        step = f"[{key}]" if isinstance(key, int) else f"[{key!r}]"
        return Entry(self.file, f"{self.where}{step}" if self.where else str(key), value)

    def mapping(self, keys: tuple[str, ...] | None = None) -> dict[str, Entry]:
        """The entries of a mapping with text keys (``keys``: the keys allowed, if limited)."""
        if not isinstance(self.value, dict):
            raise self.error(f"expected a mapping, got {_shown(self.value)}")
        for key in self.value:
            if not isinstance(key, str):
                raise self.error(f"expected text keys, got {key!r}")
            if keys is not None and key not in keys:
                raise self.error(f"unknown key {key!r}: expected one of {', '.join(keys)}")
        return {key: self._child(key, value) for key, value in self.value.items()}

    def __getitem__(self, key: str) -> Entry:
        """The entry under ``key`` of a mapping (required)."""
        entries = self.mapping()
        if key not in entries:
            raise self.error(f"missing key {key!r}")
        return entries[key]

    def get(self, key: str) -> Entry | None:
        """The entry under ``key`` of a mapping, None when absent."""
        return self.mapping().get(key)

    def items(self, count: int | None = None) -> list[Entry]:
        """The entries of a list (of ``count`` items, if given)."""
        if not isinstance(self.value, list):
            raise self.error(f"expected a list, got {_shown(self.value)}")
        if count is not None and len(self.value) != count:
            raise self.error(f"expected {count} items, got {len(self.value)}")
        return [self._child(i, value) for i, value in enumerate(self.value)]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.items())

    def text(self) -> str:
        """A non-empty string."""
        if not isinstance(self.value, str) or not self.value.strip():
            raise self.error(f"expected text, got {_shown(self.value)}")
        return self.value

    def flag(self) -> bool:
        """``true`` or ``false``."""
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {_shown(self.value)}")
        return self.value

    def integer(self, low: int = 0) -> int:
        """An integer of at least ``low``."""
        if isinstance(self.value, bool) or not isinstance(self.value, int) or self.value < low:
            raise self.error(f"expected an integer of at least {low}, got {_shown(self.value)}")
        return self.value

    def number(self, low: float, high: float) -> float:
        """A number in [``low``, ``high``], as a float."""
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise self.error(f"expected a number, got {_shown(value)}")
        if not low <= value <= high:
            raise self.error(f"{value} is outside [{low}, {high}]")
        return float(value)

    def numbers(self, count: int, low: float, high: float) -> tuple[float, ...]:
        """A list of ``count`` numbers in [``low``, ``high``]."""
        return tuple(item.number(low, high) for item in self.items(count))

    def texts(self) -> tuple[str, ...]:
        """A list of distinct texts."""
        values = tuple(item.text() for item in self.items())
        if len(set(values)) != len(values):
            raise self.error("expected distinct values")
        return values


def _shown(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {value!r}"


def read(path: Path | Traversable) -> Entry:
    """The top entry of the YAML file ``path`` (a mapping)."""
    try:
        content = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    top = Entry(str(path), "", content)
    top.mapping()
    return top
