"""Model kinds: one scorer class per kind, registered here; lists and detection derive from them.

Adding a kind: one module with a ``Scorer`` subclass decorated with ``@register_kind``, and its
module name in ``BUILTIN_MODULES`` (the order is the precedence of detection).
"""

from __future__ import annotations

import importlib

from ..bundled import resolve_model
from .base import LoadOptions, Query, Scored, Scorer

KINDS_REGISTRY: dict[str, type[Scorer]] = {}
"""Kind name -> scorer class, in detection order."""

BUILTIN_MODULES = ("itm", "generative", "contrastive", "openclip", "text")
"""Modules of this package that register a kind, in detection order."""


def register_kind(cls: type[Scorer]) -> type[Scorer]:
    """Class decorator: make ``cls`` the scorer of ``cls.kind``."""
    KINDS_REGISTRY[cls.kind] = cls
    return cls


def unregister_kind(kind: str) -> None:
    """Remove a kind added with :func:`register_kind` (tests register toy kinds)."""
    KINDS_REGISTRY.pop(kind, None)


def kinds() -> tuple[str, ...]:
    """Every registered kind, in detection order."""
    return tuple(KINDS_REGISTRY)


def scorer_class(kind: str) -> type[Scorer]:
    """The scorer class of a kind (an error lists the kinds)."""
    if kind not in KINDS_REGISTRY:
        raise ValueError(f"unknown model kind {kind!r}: use one of {', '.join(kinds())}")
    return KINDS_REGISTRY[kind]


def load_scorer(
    model: str,
    kind: str | None = None,
    batch_size: int | None = None,
    options: LoadOptions | None = None,
) -> Scorer:
    """Load ``model`` as a scorer of ``kind`` (detected from the model when None)."""
    options = options or LoadOptions()
    model = resolve_model(model)
    kind = kind or detect_kind(model, options.trust_remote_code)
    return scorer_class(kind)(model, batch_size, options)


for _module in BUILTIN_MODULES:
    importlib.import_module(f"{__name__}.{_module}")

from .detect import detect_kind  # noqa: E402  (needs the registry filled)

__all__ = [
    "KINDS_REGISTRY",
    "LoadOptions",
    "Query",
    "Scored",
    "Scorer",
    "detect_kind",
    "kinds",
    "load_scorer",
    "register_kind",
    "scorer_class",
]
