"""The model of a run resolved once: a bundled short name to its file, its files read once into
one record (``capabilities``), the kind detected (or the given one checked against the model),
the transformers config read at most once."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import bundled
from .capabilities import OPEN_CLIP_PREFIXES, Capabilities
from .detect import check_endpoint, check_kind_fits, detect
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
    path, found = model, None
    if kind is None or not scorer_class(kind).remote:  # a remote model's name is the server's
        path = bundled.resolve_model(model)
        if not endpoint:  # with one, the model is the server's name: check_endpoint names it
            check_findable(model, path)
        found = Capabilities.read(path)
        if kind is None:
            kind, found = detect(found, trust_remote_code)
        else:
            found = check_kind_fits(found, kind, trust_remote_code)
    check_endpoint(kind, endpoint)
    config = found.config if found is not None else None
    revision = getattr(config, "_commit_hash", None)
    return ResolvedModel(model, path, kind, config, revision, gguf_file, endpoint, found)


HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""``org/name``: the shape of a Hub id."""
CANONICAL_RE = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}$")
"""A name without an organisation: the Hub's canonical models (``gpt2``, ``bert-base-uncased``)
are named so, and so is a mistyped local folder (``tiny-lava``): :func:`on_the_hub` decides."""


def check_findable(model: str, path: str) -> None:
    """Refuse at once, before any model is loaded, a ``model`` that is no existing path, no
    ``org/name`` Hub id, no canonical Hub model (a bare name the Hub holds: :func:`on_the_hub`)
    and no name a kind's rules claim (an open_clip name): a mistyped local folder
    (``./runs/tiny-lava``, ``tiny-lava``) or bundled name (``smollm3``). A Hub id the local Hub
    cache lacks while the Hub is offline or cannot be reached is named so, at once (no retries
    of the loader)."""
    if Path(path).exists() or path.startswith(OPEN_CLIP_PREFIXES):
        return
    looks_like_path = (
        path.startswith(("/", ".", "~")) or "\\" in path or path.count("/") > 1 or is_gguf(path)
    )
    named = Capabilities(path)  # no such file: the name alone
    if not looks_like_path and any(c.matches_name(named) for c in scorer_classes().values()):
        return
    if not looks_like_path and HUB_ID_RE.match(path):
        on_the_hub(path, model)  # the Hub's answer is the loader's to give
        return
    if not looks_like_path and CANONICAL_RE.match(path) and on_the_hub(path, model):
        return
    raise ValueError(
        f"{not_found(model)} and not a Hub id (org/name, or a model the Hub holds under its "
        "name alone): check its spelling"
    )


def not_found(model: str) -> str:
    """The start of the line that refuses ``model``: what it is not."""
    return (
        f"model {model!r} is not a local folder, not a bundled name "
        f"({', '.join(bundled.BUNDLED_MODELS)})"
    )


def in_hub_cache(name: str) -> bool:
    """The local Hub cache holds a download of model ``name`` (a snapshot of it)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    folder = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=name, repo_type="model")
    snapshots = folder / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` is set (now, or when huggingface_hub was imported)."""
    from huggingface_hub import constants

    offline = os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
    return offline or bool(constants.HF_HUB_OFFLINE)


def on_the_hub(name: str, model: str | None = None) -> bool:
    """Whether the Hub holds a model named ``name``: in the local Hub cache, else the Hub asked
    once. A ValueError naming ``model`` (default ``name``) when it is not cached and the Hub is
    offline (``HF_HUB_OFFLINE``) or cannot be reached; an error the Hub answers with counts as
    held (the loader names it)."""
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError

    if in_hub_cache(name):
        return True
    missing = f"{not_found(model or name)} and not in the local Hub cache"
    if hub_offline():
        raise ValueError(
            f"{missing}, and the Hub is offline (HF_HUB_OFFLINE is set): download it while "
            "online, or give a local folder"
        )
    try:
        return huggingface_hub.HfApi().repo_exists(name)
    except HfHubHTTPError:
        return True
    except Exception as err:  # noqa: BLE001 (a connection, proxy or DNS error)
        raise ValueError(
            f"{missing}, and the Hub cannot be reached to look it up ({type(err).__name__}): "
            "check the connection, or give a local folder"
        ) from None


def detect_kind(model: str, trust_remote_code: bool = False, endpoint: str | None = None) -> str:
    """The kind of a Hub id, local folder, open_clip name, GGUF file or bundled short name
    (``bla_eval.bundled``): name rules first, then the transformers config, in registry order.
    With an ``endpoint`` the model is served there: the remote kind."""
    return resolve(model, None, trust_remote_code, endpoint).kind
