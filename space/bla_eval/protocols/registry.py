"""A registry of named specs (protocols, prompt templates): the specs by name, in the order
they were registered, and one error for an unknown name."""

from __future__ import annotations

from typing import Any, TypeVar

Spec = TypeVar("Spec")


class Registry(dict[str, Spec]):
    """Specs by their ``name``, built-in first; ``what`` names them in errors."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def register(self, spec: Spec) -> Spec:
        """Make ``spec`` available by its name; returns it."""
        self[_name(spec)] = spec
        return spec

    def unregister(self, name: str) -> None:
        """Remove the spec registered as ``name`` (none: nothing happens)."""
        self.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, built-in first."""
        return list(self)

    def require(self, name: str) -> Spec:
        """The spec named ``name`` (a ValueError names an unknown one and the choices)."""
        if name not in self:
            raise ValueError(f"unknown {self.what} {name!r}: use one of {', '.join(self)}")
        return self[name]


def _name(spec: Any) -> str:
    return spec.name
