"""What an OpenFlamingo model is made of: the arguments of upstream's
``create_model_and_transforms`` (vision tower, its pretrained tag, language model, tokenizer,
cross-attention interval), from a released Hub id (``releases.yaml``, package data) or from a
local folder's ``config.json`` beside its ``checkpoint.pt``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

CHECKPOINT = "checkpoint.pt"
CONFIG = "config.json"
ARGUMENTS = (
    "clip_vision_encoder_path",
    "clip_vision_encoder_pretrained",
    "lang_encoder_path",
    "tokenizer_path",
    "cross_attn_every_n_layers",
)
"""The keys of a folder's ``config.json``: upstream's ``create_model_and_transforms``
arguments (``clip_vision_encoder_pretrained`` may be null: a ``local-dir:`` tower holds its
weights)."""
LOCAL_DIR = "local-dir:"


@dataclass(frozen=True)
class FlamingoSpec:
    """The parts of one OpenFlamingo model; ``where``: the Hub id or folder it came from;
    ``checkpoint``: its ``checkpoint.pt`` (None: a Hub id's, downloaded on load)."""

    where: str
    clip_vision_encoder_path: str
    clip_vision_encoder_pretrained: str | None
    lang_encoder_path: str
    tokenizer_path: str
    cross_attn_every_n_layers: int
    checkpoint: Path | None = None
    remote_code: bool = False
    """The language model runs code of its own (MPT's ``mosaic_gpt``)."""

    def record(self) -> dict[str, Any]:
        """What ``results.json`` records of the model's parts."""
        return {name: getattr(self, name) for name in ARGUMENTS}

    def checkpoint_path(self) -> Path:
        """The ``checkpoint.pt`` on this machine (a Hub id's from the Hub cache, downloaded
        the first time)."""
        if self.checkpoint is not None:
            return self.checkpoint
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(self.where, CHECKPOINT))


@cache
def releases() -> dict[str, dict[str, Any]]:
    """Hub id -> its parts and sizes, as ``releases.yaml`` lists them."""
    import yaml

    text = resources.files(__package__).joinpath("releases.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def is_folder(files: Collection[str], config: Mapping[str, Any] | None) -> bool:
    """A folder whose regular ``files`` include ``checkpoint.pt`` and a ``config.json`` whose
    parsed ``config`` names any of upstream's arguments (:func:`spec_for` then checks it
    whole)."""
    return CHECKPOINT in files and config is not None and bool(set(ARGUMENTS) & set(config))


def is_release(name: str) -> bool:
    """A released OpenFlamingo Hub id (``releases.yaml``)."""
    return name in releases()


def spec_for(path: str) -> FlamingoSpec:
    """The parts of the model at ``path`` (a released Hub id or a folder; a ValueError names a
    key of the folder's ``config.json`` that is missing, unknown or of the wrong type)."""
    if is_release(path):
        row = releases()[path]
        return FlamingoSpec(path, *(row[k] for k in ARGUMENTS), None, bool(row["remote_code"]))
    from ..outputs import read_json

    folder = Path(path)
    data = read_json(folder / CONFIG)
    unknown = sorted(set(data) - set(ARGUMENTS) - {"remote_code"})
    missing = [k for k in ARGUMENTS if k not in data]
    if missing or unknown:
        what = f"lacks {missing[0]!r}" if missing else f"has an unknown key {unknown[0]!r}"
        raise ValueError(f"{folder / CONFIG} {what} (its keys: {', '.join(ARGUMENTS)})")
    every = data["cross_attn_every_n_layers"]
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise ValueError(
            f"{folder / CONFIG}: cross_attn_every_n_layers must be a whole number >= 1"
        )
    for key in ("clip_vision_encoder_path", "lang_encoder_path", "tokenizer_path"):
        if not isinstance(data[key], str) or not data[key]:
            raise ValueError(f"{folder / CONFIG}: {key} must be a non-empty string")
    pretrained = data["clip_vision_encoder_pretrained"]
    if pretrained is not None and not isinstance(pretrained, str):
        raise ValueError(
            f"{folder / CONFIG}: clip_vision_encoder_pretrained must be a string or null"
        )
    return FlamingoSpec(
        str(folder),
        local_vision(folder, data["clip_vision_encoder_path"]),
        pretrained or None,
        inside(folder, data["lang_encoder_path"]),
        inside(folder, data["tokenizer_path"]),
        every,
        folder / CHECKPOINT,
        bool(data.get("remote_code", False)),
    )


def inside(folder: Path, name: str) -> str:
    """A path relative to the model's folder where it names one there, else as written (a Hub
    id or an absolute path)."""
    candidate = folder / name
    return str(candidate) if not Path(name).is_absolute() and candidate.exists() else name


def local_vision(folder: Path, name: str) -> str:
    """``local-dir:`` towers relative to the model's folder; open_clip names as written."""
    if name.startswith(LOCAL_DIR):
        return LOCAL_DIR + inside(folder, name[len(LOCAL_DIR) :])
    return name
