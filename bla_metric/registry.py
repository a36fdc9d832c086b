"""One registry type for every named thing of the project: the BLA tasks (``tasks.py``), and in
the engine the benchmarks, model kinds, protocols and prompt templates.

Entries are kept by name in registration order, built-in first. A built-in entry is an object,
or a lazy ``module:attr`` path whose module is imported on first lookup (so listing names
imports nothing). Standard library only: the metric's folder on the Hub carries this file.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import attrgetter
from typing import Any, TypeVar

Entry = TypeVar("Entry")


def load(path: str) -> Any:
    """The object a ``module:attr`` path names, its module imported."""
    module, _, attr = path.partition(":")
    if not module or not attr:
        raise ValueError(f"{path!r} is not a module:attr path")
    return getattr(importlib.import_module(module), attr)


class Registry(Mapping[str, Entry]):
    """Entries by name; ``what`` names them in errors.

    ``builtin``: objects, named by ``key`` (default: their ``name``); ``lazy``: name ->
    ``module:attr`` of an object imported on first lookup. ``register`` adds an entry, or
    replaces the one of its name (``unique``: refused instead); ``unregister`` removes it, and a
    built-in entry of that name is its entry again. ``aliases`` gives other names ``require``
    finds an entry by (the mapping itself holds each entry under its own name); ``hint`` ends
    the error for an unknown name.
    """

    def __init__(
        self,
        what: str,
        builtin: Iterable[Entry] = (),
        lazy: Mapping[str, str] | None = None,
        *,
        key: Callable[[Any], str] = attrgetter("name"),
        aliases: Callable[[Any], Iterable[str]] | None = None,
        unique: bool = False,
        hint: str = "",
    ) -> None:
        self.what, self.key, self.aliases, self.unique, self.hint = what, key, aliases, unique, hint
        self._entries: dict[str, Any] = {key(entry): entry for entry in builtin}
        self._entries.update(lazy or {})
        self._lazy = set(lazy or ())
        self._builtin = (dict(self._entries), set(self._lazy))

    def __getitem__(self, name: str) -> Entry:
        entry = self._entries[name]
        if name in self._lazy:
            entry = load(entry)
            self._entries[name] = entry
            self._lazy.discard(name)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def register(self, entry: Entry) -> Entry:
        """Make ``entry`` available by its name; returns it."""
        name = self.key(entry)
        if self.unique:
            own = (name, *(self.aliases(entry) if self.aliases else ()))
            taken = [n for n in own if self.find(n) is not None]
            if taken:
                raise ValueError(f"{self.what} {taken[0]!r} is registered already")
        self._entries[name] = entry
        self._lazy.discard(name)
        return entry

    def unregister(self, name: str) -> None:
        """Remove the entry registered as ``name``; a built-in one of that name is restored
        (none: nothing happens)."""
        entries, lazy = self._builtin
        if name in entries:
            self._entries[name] = entries[name]
            if name in lazy:
                self._lazy.add(name)
        else:
            self._entries.pop(name, None)
            self._lazy.discard(name)

    def names(self) -> list[str]:
        """Every name, built-in first (imports nothing)."""
        return list(self._entries)

    def builtin_names(self) -> list[str]:
        """The built-in names, in order (those registered at run time left out)."""
        return list(self._builtin[0])

    def find(self, name: str) -> Entry | None:
        """The entry named ``name`` or known by it as an alias (None: none)."""
        if name in self._entries:
            return self[name]
        for own in self._entries if self.aliases else ():
            entry = self[own]
            if name in self.aliases(entry):
                return entry
        return None

    def require(self, name: str) -> Entry:
        """The entry :meth:`find` gives (a ValueError names an unknown one and the choices)."""
        entry = self.find(name)
        if entry is None:
            choices = ", ".join(self)
            raise ValueError(f"unknown {self.what} {name!r}: use one of {choices}{self.hint}")
        return entry
