"""Pick the model kind from a model id or path: open_clip names, GGUF files, or the HF config."""

from __future__ import annotations

import importlib
from pathlib import Path

KINDS = ("contrastive", "open_clip", "itm", "generative", "text")

OPEN_CLIP_PREFIXES = ("hf-hub:", "local-dir:")
ITM_ARCHITECTURES = {"BlipForImageTextRetrieval", "Blip2ForImageTextRetrieval"}


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


def _transformers_class(name: str):
    return getattr(importlib.import_module("transformers"), name, None)


def kind_from_config(model: str, trust_remote_code: bool = False) -> str:
    """Kind from the transformers config: architectures first, then model_type."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto as auto

    try:
        config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read a model config for {model!r}: {err}") from err
    architectures = set(getattr(config, "architectures", None) or [])
    model_type = getattr(config, "model_type", "")
    generative = set(auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES.values())
    if architectures & ITM_ARCHITECTURES:
        return "itm"
    if architectures & generative:
        return "generative"
    base = _transformers_class(auto.MODEL_MAPPING_NAMES.get(model_type, ""))
    if (
        base is not None
        and hasattr(base, "get_image_features")
        and hasattr(base, "get_text_features")
    ):
        return "contrastive"
    if model_type in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return "generative"
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "text"
    raise ValueError(
        f"unknown model kind for {model!r} (model_type={model_type!r}, "
        f"architectures={sorted(architectures)}); pass --kind one of {', '.join(KINDS)}"
    )


def detect_kind(model: str, trust_remote_code: bool = False) -> str:
    """One of ``KINDS`` for a Hub id, a local folder, an open_clip name or a GGUF file."""
    if is_gguf(model):
        return "text"
    if open_clip_name(model) is not None:
        return "open_clip"
    return kind_from_config(model, trust_remote_code)
