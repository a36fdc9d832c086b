"""The model of a run resolved once: a bundled short name to its file, the kind detected (or
the given one checked against the model), the transformers config read at most once."""

from __future__ import annotations

from .. import bundled
from .detect import check_endpoint, check_kind_fits, detect
from .registry import remote_kinds, scorer_class
from .resolved_model import ResolvedModel


def resolve(
    model: str,
    kind: str | None = None,
    trust_remote_code: bool = False,
    endpoint: str | None = None,
    gguf_file: str | None = None,
) -> ResolvedModel:
    """``model`` (Hub id, local folder, open_clip name, GGUF file or bundled short name) as a
    run loads it, before anything is loaded or written. ``kind`` None: detected (with an
    ``endpoint``, the remote kind); else an unknown kind, or one that another kind's rules claim
    the model for, is refused. A remote kind needs an endpoint and an endpoint a remote kind."""
    if kind is None and endpoint:
        kind = remote_kinds()[0]
    path, config = model, None
    if kind is None or not scorer_class(kind).remote:  # a remote model's name is the server's
        path = bundled.resolve_model(model)
        if kind is None:
            kind, config = detect(path, trust_remote_code)
        else:
            config = check_kind_fits(path, kind, trust_remote_code)
    check_endpoint(kind, endpoint)
    revision = getattr(config, "_commit_hash", None)
    return ResolvedModel(model, path, kind, config, revision, gguf_file, endpoint)


def detect_kind(model: str, trust_remote_code: bool = False, endpoint: str | None = None) -> str:
    """The kind of a Hub id, local folder, open_clip name, GGUF file or bundled short name
    (``bla_eval.bundled``): name rules first, then the transformers config, in registry order.
    With an ``endpoint`` the model is served there: the remote kind."""
    return resolve(model, None, trust_remote_code, endpoint).kind
