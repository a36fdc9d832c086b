"""The model of a run resolved once: a bundled short name to its file, the kind detected (or
the given one checked against the model), the transformers config read at most once."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import bundled
from .detect import OPEN_CLIP_PREFIXES, check_endpoint, check_kind_fits, detect
from .registry import remote_kinds, scorer_class, scorer_classes
from .resolved_model import ResolvedModel, is_gguf


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
        if not endpoint:  # with one, the model is the server's name: check_endpoint names it
            check_findable(model, path)
        if kind is None:
            kind, config = detect(path, trust_remote_code)
        else:
            config = check_kind_fits(path, kind, trust_remote_code)
    check_endpoint(kind, endpoint)
    revision = getattr(config, "_commit_hash", None)
    return ResolvedModel(model, path, kind, config, revision, gguf_file, endpoint)


HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""``org/name``: the shape of a Hub id."""
CANONICAL_RE = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}$")
"""A name without an organisation: the Hub's canonical models (``gpt2``, ``bert-base-uncased``)
are named so, and so is a mistyped local folder (``tiny-lava``): :func:`on_the_hub` decides."""


def check_findable(model: str, path: str) -> None:
    """Refuse at once, before any model is loaded, a ``model`` that is no existing path, no
    ``org/name`` Hub id, no canonical Hub model (a bare name the Hub holds: :func:`on_the_hub`)
    and no name a kind's rules claim (an open_clip name): a mistyped local folder
    (``./runs/tiny-lava``, ``tiny-lava``) or bundled name (``smollm3``)."""
    if Path(path).exists() or path.startswith(OPEN_CLIP_PREFIXES):
        return
    looks_like_path = (
        path.startswith(("/", ".", "~")) or "\\" in path or path.count("/") > 1 or is_gguf(path)
    )
    if not looks_like_path and HUB_ID_RE.match(path):
        return
    if not looks_like_path and any(c.matches_name(path) for c in scorer_classes().values()):
        return
    if not looks_like_path and CANONICAL_RE.match(path) and on_the_hub(path):
        return
    names = ", ".join(bundled.BUNDLED_MODELS)
    raise ValueError(
        f"model {model!r} is not a local folder, not a bundled name ({names}) and not a Hub "
        "id (org/name, or a model the Hub holds under its name alone): check its spelling"
    )


def on_the_hub(name: str) -> bool:
    """Whether the Hub holds a model named ``name``: its config in the local Hub cache, else
    (unless ``HF_HUB_OFFLINE``) the Hub asked; a Hub that cannot be reached is a ValueError
    naming the model."""
    import huggingface_hub
    from huggingface_hub import constants

    if isinstance(huggingface_hub.try_to_load_from_cache(name, "config.json"), str):
        return True
    offline = os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
    if offline or constants.HF_HUB_OFFLINE:
        return False
    try:
        return huggingface_hub.HfApi().repo_exists(name)
    except Exception as err:  # noqa: BLE001 (a connection, proxy or server error)
        raise ValueError(
            f"model {name!r} is no local folder, and the Hub cannot be reached to look it up "
            f"({type(err).__name__}): check the connection, or give a local folder"
        ) from None


def detect_kind(model: str, trust_remote_code: bool = False, endpoint: str | None = None) -> str:
    """The kind of a Hub id, local folder, open_clip name, GGUF file or bundled short name
    (``bla_eval.bundled``): name rules first, then the transformers config, in registry order.
    With an ``endpoint`` the model is served there: the remote kind."""
    return resolve(model, None, trust_remote_code, endpoint).kind
