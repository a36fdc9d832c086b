"""An OpenFlamingo checkpoint loaded strictly: ``checkpoint.pt`` (a pickle of tensors, read with
``weights_only=True``) mapped key by key onto :class:`bla_eval.flamingo.model.Flamingo`.

Upstream saved the keys of the trainable parts and of every parameter named ``embed``
(``filter_state_dict_to_trainable``): the resampler, the cross-attention blocks, the language
model's input embeddings and, where its name holds ``embed``, its output head (GPT-NeoX's
``embed_out``, which transformers 5 names ``lm_head``); those are required. A checkpoint key is
mapped by dropping nothing and renaming only as transformers renames the language model's own
legacy keys; a key that names no weight of the model (upstream's duplicate lists
``old_decoder_blocks`` and ``gated_cross_attn_layers``, the buffers older transformers saved) is
kept in :attr:`LoadReport.unused`; a required key missing is an error naming it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

LM_PREFIX = "lang_encoder."
REQUIRED_PREFIXES = ("perceiver.",)


@dataclass(frozen=True)
class Rename:
    """One of the language model's legacy key renames (transformers' conversion mapping)."""

    source: str
    target: str

    def apply(self, key: str) -> str:
        return re.sub(self.source, self.target, key)

    def legacy(self, key: str) -> str:
        """The key as a checkpoint of older transformers names it: an anchored literal rename
        (``^embed_out\\.`` -> ``lm_head.``) undone; any other rename is left as it is."""
        literal = self.source.removeprefix("^").replace("\\.", ".")
        plain = self.source.startswith("^") and not any(c in literal for c in "()[]*+?|\\$")
        if plain and key.startswith(self.target):
            return literal + key[len(self.target) :]
        return key


def lm_renames(lm: nn.Module) -> list[Rename]:
    """The plain key renames transformers applies when it loads ``lm``'s checkpoints."""
    try:
        from transformers.conversion_mapping import extract_weight_conversions_for_model
        from transformers.core_model_loading import WeightRenaming
    except ImportError:  # an older transformers: no renames
        return []
    found = []
    for transform in extract_weight_conversions_for_model(lm) or []:
        if type(transform) is not WeightRenaming:
            continue
        sources = getattr(transform, "_original_source_patterns", transform.source_patterns)
        targets = getattr(transform, "_original_target_patterns", transform.target_patterns)
        if len(sources) == 1 and len(targets) == 1:
            found.append(Rename(sources[0], targets[0]))
    return found


@dataclass
class LoadReport:
    """What a checkpoint gave the model."""

    used: list[str] = field(default_factory=list)
    """Checkpoint keys loaded, as the checkpoint names them."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Checkpoint key -> the model's key, where they differ beyond the prefix."""
    unused: list[str] = field(default_factory=list)
    """Checkpoint keys that name no weight of the model."""

    def record(self) -> dict[str, Any]:
        return {
            "checkpoint_keys_used": len(self.used),
            "checkpoint_keys_renamed": dict(sorted(self.renamed.items())),
            "checkpoint_keys_unused": sorted(self.unused),
        }


class KeyMap:
    """Checkpoint keys <-> the model's keys."""

    def __init__(self, model: nn.Module) -> None:
        self.renames = lm_renames(model.lang_encoder)
        self.model_keys = set(model.state_dict())

    def to_model(self, key: str) -> str:
        if not key.startswith(LM_PREFIX):
            return key
        inner = key[len(LM_PREFIX) :]
        for rename in self.renames:
            inner = rename.apply(inner)
        return LM_PREFIX + inner

    def to_checkpoint(self, key: str) -> str:
        if not key.startswith(LM_PREFIX):
            return key
        inner = key[len(LM_PREFIX) :]
        for rename in reversed(self.renames):
            inner = rename.legacy(inner)
        return LM_PREFIX + inner


def required_keys(model: nn.Module, keys: KeyMap) -> list[str]:
    """The model keys a released checkpoint holds (upstream's filter): the resampler, the
    cross-attention blocks, and every language-model parameter whose checkpoint name holds
    ``embed`` or that is its input embedding."""
    embedding = model.lang_encoder.get_input_embeddings()
    input_key = next(f"{n}.weight" for n, m in model.named_modules() if m is embedding)
    required = []
    for name, _ in model.named_parameters(remove_duplicate=False):
        legacy = keys.to_checkpoint(name)
        if (
            name.startswith(REQUIRED_PREFIXES)
            or ".gated_cross_attn_layer." in name
            or name.startswith(LM_PREFIX)
            and ("embed" in legacy or name == input_key)
        ):
            required.append(name)
    return sorted(set(required))


def read_checkpoint(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of ``checkpoint.pt`` (weights only: a pickle that holds code is refused)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as err:  # noqa: BLE001 - a pickle weights_only refuses, a torn file
        first = (str(err).strip().splitlines() or [""])[0]
        raise ValueError(f"cannot read {path} as weights: {type(err).__name__}: {first}") from None
    if isinstance(state, dict) and isinstance(state.get("model_state_dict"), dict):
        state = state["model_state_dict"]  # a training checkpoint of upstream's train script
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path} holds no mapping of names to tensors")
    return {k.removeprefix("module."): v for k, v in state.items()}


def load_checkpoint(model: nn.Module, state: dict[str, torch.Tensor], where: str) -> LoadReport:
    """Copy ``state`` into ``model`` through the key map; a required key missing, or a shape
    that differs, is a ValueError naming the key."""
    keys = KeyMap(model)
    own = model.state_dict(keep_vars=True)
    report = LoadReport()
    given: set[str] = set()
    for key, tensor in state.items():
        target = keys.to_model(key)
        if target not in own:
            report.unused.append(key)
            continue
        if tuple(own[target].shape) != tuple(tensor.shape):
            raise ValueError(
                f"{where}: {key} has shape {tuple(tensor.shape)}, the model's {target} "
                f"{tuple(own[target].shape)}"
            )
        with torch.no_grad():
            own[target].copy_(tensor.to(own[target].dtype))
        report.used.append(key)
        given.add(target)
        if target != key:
            report.renamed[key] = target
    missing = [k for k in required_keys(model, keys) if k not in given]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ValueError(
            f"{where} lacks {keys.to_checkpoint(missing[0])} (the model's {missing[0]}){more}"
        )
    return report


def released_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The tensors a released checkpoint holds of ``model`` (:func:`required_keys`), under the
    names upstream saved them with."""
    keys = KeyMap(model)
    own = model.state_dict()
    return {keys.to_checkpoint(k): own[k].detach().clone() for k in required_keys(model, keys)}
