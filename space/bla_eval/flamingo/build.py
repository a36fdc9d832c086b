"""An OpenFlamingo model put together from its parts (:class:`bla_eval.flamingo.spec.FlamingoSpec`)
as upstream's ``create_model_and_transforms`` does (open_clip tower with its patch tokens, the
tokenizer with ``<|endofchunk|>``, ``<image>`` and, without a pad token, ``<PAD>`` added in that
order, the language model's embeddings resized to the tokenizer), then its checkpoint loaded
strictly (:mod:`bla_eval.flamingo.checkpoint`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .checkpoint import LoadReport, load_checkpoint, read_checkpoint
from .model import END_OF_CHUNK, IMAGE_TOKEN, PAD_TOKEN, Flamingo
from .spec import FlamingoSpec


@dataclass
class LoadedFlamingo:
    """A model ready to score: the model, its tokenizer, the image transform and what its
    checkpoint gave."""

    model: Flamingo
    tokenizer: Any
    preprocess: Any
    report: LoadReport | None


def add_flamingo_tokens(tokenizer: Any) -> None:
    """Upstream's special tokens, in upstream's order (so their ids are upstream's)."""
    tokenizer.add_special_tokens({"additional_special_tokens": [END_OF_CHUNK, IMAGE_TOKEN]})
    if tokenizer.pad_token is None:
        tokenizer.add_special_tokens({"pad_token": PAD_TOKEN})


def vision_tower(spec: FlamingoSpec) -> tuple[Any, Any, int]:
    """(open_clip's image tower returning its patch tokens, its image transform, its width)."""
    import open_clip

    clip, _, preprocess = open_clip.create_model_and_transforms(
        spec.clip_vision_encoder_path, pretrained=spec.clip_vision_encoder_pretrained
    )
    visual = clip.visual
    visual.output_tokens = True
    width = getattr(getattr(visual, "transformer", None), "width", None)
    if not isinstance(width, int):
        raise ValueError(
            f"{spec.clip_vision_encoder_path}: not a ViT image tower (no transformer width)"
        )
    return visual, preprocess, width


def assemble(
    spec: FlamingoSpec, trust_remote_code: bool = False, meta: bool = False
) -> tuple[Flamingo, Any, Any]:
    """(model, tokenizer, image transform) of ``spec`` before its checkpoint: the tower's and
    the language model's own weights; ``meta``: the language model on the meta device (its
    sizes only)."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    remote = trust_remote_code or spec.remote_code
    visual, preprocess, width = vision_tower(spec)
    tokenizer = AutoTokenizer.from_pretrained(spec.tokenizer_path, trust_remote_code=remote)
    add_flamingo_tokens(tokenizer)
    if meta:
        config = AutoConfig.from_pretrained(spec.lang_encoder_path, trust_remote_code=remote)
        with torch.device("meta"):
            lm = AutoModelForCausalLM.from_config(config, trust_remote_code=remote)
    else:
        lm = AutoModelForCausalLM.from_pretrained(
            spec.lang_encoder_path, trust_remote_code=remote, dtype=torch.float32
        )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # new rows of an untied head no checkpoint holds: drawn alike
        lm.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    model = Flamingo(
        visual,
        lm,
        eoc_token_id=tokenizer.encode(END_OF_CHUNK)[-1],
        media_token_id=tokenizer.encode(IMAGE_TOKEN)[-1],
        vis_dim=width,
        cross_attn_every_n_layers=spec.cross_attn_every_n_layers,
    )
    return model, tokenizer, preprocess


def load_flamingo(
    spec: FlamingoSpec,
    device: torch.device,
    dtype: torch.dtype,
    trust_remote_code: bool = False,
) -> LoadedFlamingo:
    """The model of ``spec`` with its checkpoint, on ``device`` in ``dtype``, in eval mode."""
    model, tokenizer, preprocess = assemble(spec, trust_remote_code)
    path = spec.checkpoint_path()
    report = load_checkpoint(model, read_checkpoint(path), str(path))
    model.to(device=device, dtype=dtype).eval()
    return LoadedFlamingo(model, tokenizer, preprocess, report)
