"""Pick the model kind of a model id or path from the registered scorer classes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

OPEN_CLIP_PREFIXES = ("hf-hub:", "local-dir:")


def is_gguf(model: str) -> bool:
    """A path to a ``.gguf`` file."""
    return model.lower().endswith(".gguf")


def open_clip_name(model: str) -> str | None:
    """The open_clip model name for ``model`` (``local-dir:`` prefix for folders), else None."""
    if model.startswith(OPEN_CLIP_PREFIXES):
        return model
    if (Path(model) / "open_clip_config.json").is_file():
        return f"local-dir:{model}"
    if Path(model).exists() or (model.count("/") == 1 and ":" not in model):
        return None  # a local folder or a Hub id: transformers decides
    import open_clip

    if model.split(":")[0] in open_clip.list_models():
        return model
    return None


def read_config(model: str, trust_remote_code: bool = False) -> Any:
    """The transformers config of ``model`` (an error names the model)."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read a model config for {model!r}: {err}") from err


def detect_kind(model: str, trust_remote_code: bool = False, endpoint: str | None = None) -> str:
    """The kind of a Hub id, local folder, open_clip name, GGUF file or bundled short name
    (``bla_eval.bundled``): name rules first, then the transformers config, in registry order.
    With an ``endpoint`` the model is served there: the remote kind."""
    from ..bundled import resolve_model
    from . import kinds, scorer_classes

    if endpoint:
        return remote_kinds()[0]
    model = resolve_model(model)
    classes = scorer_classes().values()
    for cls in classes:
        if cls.matches_name(model):
            return cls.kind
    config = read_config(model, trust_remote_code)
    for cls in classes:
        if cls.matches_config(config):
            return cls.kind
    raise ValueError(
        f"unknown model kind for {model!r} (model_type={getattr(config, 'model_type', '')!r}, "
        f"architectures={sorted(getattr(config, 'architectures', None) or [])}); "
        f"pass --kind one of {', '.join(kinds())}"
    )


def check_kind_fits(model: str, kind: str, trust_remote_code: bool = False) -> None:
    """Refuse an explicit ``--kind`` that another kind's rules claim the model for and its own
    rules do not (e.g. ``--kind itm`` on a CLIP model), before anything is loaded. A model whose
    config cannot be read, or that no rule claims, is left to the loader."""
    from ..bundled import resolve_model
    from . import KIND_INFO, scorer_class, scorer_classes

    if kind in KIND_INFO and KIND_INFO[kind].remote:
        return
    model = resolve_model(model)
    classes = scorer_classes().values()
    if scorer_class(kind).matches_name(model):
        return
    named = next((c.kind for c in classes if c.matches_name(model)), None)
    if named is None:
        try:
            config = read_config(model, trust_remote_code)
        except ValueError:
            return
        if scorer_class(kind).matches_config(config):
            return
        detected = next((c.kind for c in classes if c.matches_config(config)), None)
        if detected is None:
            return
        names = ", ".join(sorted(architectures(config))) or "no architectures"
        what = f"{getattr(config, 'model_type', '?')} model ({names})"
    else:
        detected, what = named, f"{named} model"
    raise ValueError(
        f"--kind {kind} does not fit {model!r}: it is a {what}, of kind {detected!r}; "
        f"pass --kind {detected} or leave --kind out"
    )


def remote_kinds() -> list[str]:
    """The kinds whose models run behind an API endpoint."""
    from . import KIND_INFO

    return [kind for kind, info in KIND_INFO.items() if info.remote]


def check_endpoint(kind: str, endpoint: str | None) -> None:
    """A remote kind needs an endpoint, and an endpoint needs a remote kind (ValueError)."""
    from . import KIND_INFO

    remote = KIND_INFO[kind].remote if kind in KIND_INFO else False
    if remote and not endpoint:
        raise ValueError(f"model kind {kind!r} needs --endpoint URL (the API base of its server)")
    if endpoint and not remote:
        raise ValueError(
            f"--endpoint is for model kind {' or '.join(map(repr, remote_kinds()))}; kind "
            f"{kind!r} loads the model itself"
        )


def architectures(config: Any) -> set[str]:
    """The architecture class names a config declares."""
    return set(getattr(config, "architectures", None) or [])


def is_dual_encoder(config: Any) -> bool:
    """True when the config's base model class has image and text feature methods."""
    import transformers
    from transformers.models.auto import modeling_auto as auto

    name = auto.MODEL_MAPPING_NAMES.get(getattr(config, "model_type", ""), "")
    base = getattr(transformers, name, None) if name else None
    return base is not None and all(
        hasattr(base, m) for m in ("get_image_features", "get_text_features")
    )
