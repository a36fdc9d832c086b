"""The model kind of a resolved model path, from the registered scorer classes' rules: name
rules first, then the transformers config, in registry order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .registry import KIND_INFO, kinds, remote_kinds, scorer_class, scorer_classes

OPEN_CLIP_PREFIXES = ("hf-hub:", "local-dir:")


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
    """The transformers config of ``model`` (an error names the model); a local folder's
    ``config.json`` is read through the bounded reader first (nesting, numbers, a FIFO)."""
    from transformers import AutoConfig

    from ..outputs import read_json

    if (Path(model) / "config.json").exists():
        read_json(Path(model) / "config.json")
    try:
        return AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code)
    except RecursionError:  # a config nested too deep for json (one from the Hub)
        raise ValueError(f"cannot read a model config for {model!r}: nested too deep") from None
    except (OSError, ValueError) as err:
        if not trust_remote_code and "trust_remote_code" in str(err):
            raise ValueError(
                f"model {model!r} runs code of its own (its config's auto_map): pass "
                "--trust-remote-code to run it, after reading that code"
            ) from err
        raise ValueError(f"cannot read a model config for {model!r}: {err}") from err


def detect(path: str, trust_remote_code: bool = False) -> tuple[str, Any]:
    """(kind, transformers config or None) of a local path or Hub id: a name rule decides
    without the config, else the config read once (an error names the model and the kinds)."""
    classes = scorer_classes().values()
    for cls in classes:
        if cls.matches_name(path):
            return cls.kind, None
    config = read_config(path, trust_remote_code)
    refuse_out_of_scope(path, config)
    for cls in classes:
        if cls.matches_config(config):
            return cls.kind, config
    raise ValueError(
        f"unknown model kind for {path!r} (model_type={getattr(config, 'model_type', '')!r}, "
        f"architectures={sorted(getattr(config, 'architectures', None) or [])}); "
        f"pass --kind one of {', '.join(kinds())}"
    )


def check_kind_fits(path: str, kind: str, trust_remote_code: bool = False) -> Any:
    """Refuse an explicit ``--kind`` that another kind's rules claim the model for and its own
    rules do not (e.g. ``--kind itm`` on a CLIP model), before anything is loaded. Returns the
    transformers config when it was read (None otherwise). A model whose config cannot be read,
    or that no rule claims, is left to the loader."""
    if scorer_class(kind).matches_name(path):
        return None
    classes = scorer_classes().values()
    named = next((c.kind for c in classes if c.matches_name(path)), None)
    if named is None:
        try:
            config = read_config(path, trust_remote_code)
        except ValueError:
            return None
        refuse_out_of_scope(path, config)
        if scorer_class(kind).matches_config(config):
            return config
        detected = next((c.kind for c in classes if c.matches_config(config)), None)
        if detected is None:
            return config
        names = ", ".join(sorted(architectures(config))) or "no architectures"
        what = f"{getattr(config, 'model_type', '?')} model ({names})"
    else:
        detected, what = named, f"{named} model"
    raise ValueError(
        f"--kind {kind} does not fit {path!r}: it is a {what}, of kind {detected!r}; "
        f"pass --kind {detected} or leave --kind out"
    )


def check_endpoint(kind: str, endpoint: str | None) -> None:
    """A remote kind needs an endpoint, and an endpoint needs a remote kind (ValueError)."""
    remote = KIND_INFO[kind].remote if kind in KIND_INFO else False
    if remote and not endpoint:
        raise ValueError(f"model kind {kind!r} needs --endpoint URL (the API base of its server)")
    if endpoint and not remote:
        raise ValueError(
            f"--endpoint is for model kind {' or '.join(map(repr, remote_kinds()))}; kind "
            f"{kind!r} loads the model itself"
        )


def auto_classes(config: Any) -> set[str]:
    """The transformers auto classes a remote-code config maps to its own code (``auto_map``)."""
    auto_map = getattr(config, "auto_map", None)
    return set(auto_map) if isinstance(auto_map, dict) else set()


def architectures(config: Any) -> set[str]:
    """The architecture class names a config declares."""
    return set(getattr(config, "architectures", None) or [])


def is_dual_encoder(config: Any) -> bool:
    """True when the config's base model class has image and text feature methods."""
    return base_is_dual_encoder(getattr(config, "model_type", ""))


def base_is_dual_encoder(model_type: str) -> bool:
    """True when the base model class of ``model_type`` (``AutoModel``'s) has image and text
    feature methods: a head class of that type (OWL-ViT's detector, CLIPSeg's segmenter) holds
    the dual encoder and loads as it."""
    import transformers
    from transformers.models.auto import modeling_auto as auto

    name = auto.MODEL_MAPPING_NAMES.get(model_type or "", "")
    base = getattr(transformers, name, None) if isinstance(name, str) and name else None
    return base is not None and all(
        hasattr(base, m) for m in ("get_image_features", "get_text_features")
    )


IMAGE_TOKEN_NAMES = ("image_token_id", "image_token_index")
VISION_WORDS = ("vision", "visual", "image", "img")
"""Words in a config attribute that holds an image encoder's settings (``vision_config``,
``visual``, ``img_processor``, ``visual_tokenizer_config``, ...)."""


def declares_images(config: Any) -> bool:
    """The model takes images: its config (or a sub-config) names an image token or holds an
    image encoder's settings, or its processor has an image processor."""
    return _config_declares_images(config, depth=2) or has_image_processor(config)


def _config_declares_images(config: Any, depth: int) -> bool:
    values = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    for name, value in values.items():
        if name in IMAGE_TOKEN_NAMES and isinstance(value, int):
            return True
        if isinstance(value, dict) and value:
            if any(word in name for word in VISION_WORDS):
                return True
            if depth > 1 and _config_declares_images(value, depth - 1):
                return True
    return False


PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


def has_image_processor(config: Any) -> bool:
    """The processor files beside the config (its ``_name_or_path``: a folder or Hub id) declare
    an image processor."""
    from transformers.utils import cached_file

    from ..outputs import read_json

    where = getattr(config, "_name_or_path", "") or ""
    for name in PROCESSOR_FILES if where else ():
        try:
            path = cached_file(
                where,
                name,
                _raise_exceptions_for_missing_entries=False,
                _raise_exceptions_for_connection_errors=False,
            )
        except (OSError, ValueError):
            path = None
        if not path:
            continue
        try:
            data = read_json(Path(path))  # bounded, a regular file, a JSON object
        except ValueError:
            continue
        image = data.get("image_processor", data)
        if isinstance(image, dict) and "image_processor_type" in image:
            return True
    return False


def refuse_out_of_scope(path: str, config: Any) -> None:
    """A ValueError in one line for a model that no kind scores (:func:`out_of_scope`)."""
    note = out_of_scope(config)
    if note:
        raise ValueError(f"model {path!r}: {note}")


def out_of_scope(config: Any) -> str | None:
    """Why no kind scores a model, in one line (None: no known reason): late-interaction
    retrieval (many vectors per image and query, compared by MaxSim: ColPali, ColQwen2)."""
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "")
    retrieval = any(a.endswith("ForRetrieval") for a in architectures(config))
    if retrieval or model_type in auto.MODEL_FOR_RETRIEVAL_MAPPING_NAMES:
        return (
            f"{model_type} is a late-interaction retrieval model (many vectors per image and "
            "query, compared by MaxSim): no kind scores it"
        )
    return None
