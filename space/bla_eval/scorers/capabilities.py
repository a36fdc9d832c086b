"""What a model is, read from its files once: :class:`Capabilities`, the one record every kind's
detection rules read (as transformers' Auto classes read one config).

The record is filled in two steps: :meth:`Capabilities.read` lists a local folder's files and reads
its ``config.json`` through the bounded reader (the name rules decide from these alone), then
:meth:`Capabilities.with_config` adds the transformers config (the config rules). What the
processor files declare is read on first use, once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ..outputs import read_json

CONFIG = "config.json"
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
OPEN_CLIP_PREFIXES = ("hf-hub:", "local-dir:")
IMAGE_TOKEN_NAMES = ("image_token_id", "image_token_index")
VISION_WORDS = ("vision", "visual", "image", "img")
"""Words in a config attribute that holds an image encoder's settings (``vision_config``,
``visual``, ``img_processor``, ``visual_tokenizer_config``, ...)."""


@dataclass(frozen=True)
class Capabilities:
    """One model as detection reads it (a local path, Hub id, open_clip name or GGUF file)."""

    path: str
    files: frozenset[str] = frozenset()
    """The names of the regular files in a local folder (empty: not a folder)."""
    config_json: Mapping[str, Any] | None = None
    """A local folder's ``config.json`` as the bounded reader parsed it (None: none, or
    unreadable)."""
    unreadable: str | None = None
    """Why the folder's ``config.json`` could not be read (the bounded reader's line)."""
    config: Any = None
    """The transformers config (None until :meth:`with_config`)."""

    @classmethod
    def read(cls, path: str) -> Capabilities:
        """The files of ``path``: a folder's file names and its ``config.json``, read once."""
        folder = Path(path)
        files: frozenset[str] = frozenset()
        if folder.is_dir():
            with os.scandir(folder) as entries:
                files = frozenset(e.name for e in entries if e.is_file())
        document, unreadable = None, None
        if (folder / CONFIG).exists():
            try:
                document = read_json(folder / CONFIG)  # bounded: nesting, numbers, a FIFO
            except ValueError as err:
                unreadable = str(err)
        return cls(path, files, document, unreadable)

    def with_config(self, trust_remote_code: bool = False) -> Capabilities:
        """The record with its transformers config read (a ValueError names the model)."""
        if self.unreadable is not None:
            raise ValueError(self.unreadable)
        return replace(self, config=read_config(self.path, trust_remote_code, checked=True))

    @property
    def model_type(self) -> str:
        return getattr(self.config, "model_type", "") or ""

    @property
    def architectures(self) -> frozenset[str]:
        """The architecture class names the config declares."""
        return frozenset(getattr(self.config, "architectures", None) or [])

    @property
    def auto_classes(self) -> frozenset[str]:
        """The transformers auto classes a remote-code config maps to its own code
        (``auto_map``)."""
        auto_map = getattr(self.config, "auto_map", None)
        return frozenset(auto_map) if isinstance(auto_map, dict) else frozenset()

    @cached_property
    def dual_encoder(self) -> bool:
        """The config's base model class has image and text feature methods."""
        return base_is_dual_encoder(self.model_type)

    @cached_property
    def causal_lm(self) -> bool:
        """The model type has a causal-LM class."""
        from transformers.models.auto import modeling_auto as auto

        return self.model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    @cached_property
    def image_processor(self) -> str | None:
        """The image processor the processor files beside the config declare (its
        ``_name_or_path``: a folder or Hub id), read once (None: none)."""
        return declared_image_processor(getattr(self.config, "_name_or_path", "") or "")

    @cached_property
    def takes_images(self) -> bool:
        """The model takes images: its config (or a sub-config) names an image token or holds
        an image encoder's settings, or its processor has an image processor."""
        return _config_declares_images(self.config, depth=2) or self.image_processor is not None


def read_config(model: str, trust_remote_code: bool = False, checked: bool = False) -> Any:
    """The transformers config of ``model`` (an error names the model); a local folder's
    ``config.json`` is read through the bounded reader first (nesting, numbers, a FIFO), unless
    ``checked``: :meth:`Capabilities.read` read it so."""
    from transformers import AutoConfig

    if not checked and (Path(model) / CONFIG).exists():
        read_json(Path(model) / CONFIG)
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


def declared_image_processor(where: str) -> str | None:
    """The ``image_processor_type`` the processor files of ``where`` (a folder or Hub id)
    declare, the first file that declares one (None: none)."""
    from transformers.utils import cached_file

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
            return str(image["image_processor_type"])
    return None


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
