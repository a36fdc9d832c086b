"""Model kinds: one scorer class per kind (``registry``), the model of a run resolved once
(``resolve``: its files read into one record, ``capabilities``, that every kind's detection rules
read), and the loading of a resolved model as its kind's scorer.

The kind names, their help lines and examples are known without importing any scorer module (so
``bla-eval --help`` and the kind menus need no torch); a scorer class is imported when it is used.
"""

from __future__ import annotations

from ..queries import Query
from .base import LoadOptions, Scored, Scorer, raised_by_engine
from .capabilities import Capabilities
from .registry import (
    BUILTIN_KINDS,
    KIND_INFO,
    KINDS,
    KindInfo,
    kind_helps,
    kinds,
    register_kind,
    scorer_class,
    scorer_classes,
    unregister_kind,
)
from .resolve import detect_kind, resolve
from .resolved_model import ResolvedModel


def load_scorer(
    model: ResolvedModel | str,
    kind: str | None = None,
    batch_size: int | None = None,
    options: LoadOptions | None = None,
) -> Scorer:
    """Load ``model`` as the scorer of its kind: a :class:`ResolvedModel` as it was resolved, or
    a model id resolved here as a run does (``kind`` None: detected from the model)."""
    options = options or LoadOptions()
    if not isinstance(model, ResolvedModel):
        endpoint = options.api.endpoint if options.api is not None else None
        model = resolve(model, kind, options.trust_remote_code, endpoint)
    try:
        return scorer_class(model.kind)(model, batch_size, options)
    except (OSError, ImportError):
        raise  # already a message for the user
    except Exception as err:  # a library's own failure to load: one line naming model and kind
        if isinstance(err, ValueError) and raised_by_engine(err):
            raise
        model_type = getattr(model.config, "model_type", None)
        what = f"{model.path!r} ({model_type})" if model_type else repr(model.path)
        first = (str(err).strip().splitlines() or [""])[0]
        raise ValueError(
            f"cannot load {what} as model kind {model.kind!r}: {type(err).__name__}: {first}"
        ) from err


__all__ = [
    "BUILTIN_KINDS",
    "Capabilities",
    "KINDS",
    "KIND_INFO",
    "KindInfo",
    "LoadOptions",
    "Query",
    "ResolvedModel",
    "Scored",
    "Scorer",
    "detect_kind",
    "kind_helps",
    "kinds",
    "load_scorer",
    "register_kind",
    "resolve",
    "scorer_class",
    "scorer_classes",
    "unregister_kind",
]
