"""Model kinds: one scorer class per kind, picked from the model's config (``--kind`` overrides)."""

from __future__ import annotations

import importlib

from .base import LoadOptions, Scorer
from .detect import KINDS, detect_kind

_CLASSES: dict[str, str] = {
    "contrastive": "contrastive:ContrastiveScorer",
    "open_clip": "openclip:OpenClipScorer",
    "itm": "itm:MatchingScorer",
    "generative": "generative:GenerativeScorer",
    "text": "text:TextScorer",
}


def scorer_class(kind: str) -> type[Scorer]:
    """The scorer class of a kind (imported on demand)."""
    if kind not in _CLASSES:
        raise ValueError(f"unknown model kind {kind!r}: use one of {', '.join(KINDS)}")
    module, name = _CLASSES[kind].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def load_scorer(
    model: str, kind: str | None = None, batch_size: int = 32, options: LoadOptions | None = None
) -> Scorer:
    """Load ``model`` as a scorer of ``kind`` (detected from the model when None)."""
    options = options or LoadOptions()
    kind = kind or detect_kind(model, options.trust_remote_code)
    return scorer_class(kind)(model, batch_size, options)


__all__ = ["KINDS", "LoadOptions", "Scorer", "detect_kind", "load_scorer", "scorer_class"]
