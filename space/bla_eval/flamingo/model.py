"""An OpenFlamingo model on today's libraries: an open_clip vision tower, the Perceiver
resampler, and a transformers causal language model whose decoder layers get a gated
cross-attention block every ``cross_attn_every_n_layers`` layers (found in the model's own
module tree, whatever its architecture). Which image a text token sees follows from the
``<image>`` tokens before it, computed by a hook on the language model's forward, so its own
``forward`` and ``generate`` (KV cache, beam search) run unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from .layers import GatedCrossAttentionBlock, PerceiverResampler

IMAGE_TOKEN = "<image>"
END_OF_CHUNK = "<|endofchunk|>"
PAD_TOKEN = "<PAD>"
LAYER_COUNT_NAMES = ("num_hidden_layers", "n_layers", "n_layer", "num_layers")


def layer_count(config: Any) -> int:
    """The number of decoder layers a language model's config declares."""
    for name in LAYER_COUNT_NAMES:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError(f"its config ({type(config).__name__}) declares no number of layers")


def decoder_layers_path(lm: nn.Module) -> str:
    """The dotted name of the ``nn.ModuleList`` that holds the language model's decoder layers:
    the shallowest list of as many modules as its config declares layers."""
    count = layer_count(lm.config)
    found = [
        name
        for name, module in lm.named_modules()
        if isinstance(module, nn.ModuleList) and len(module) == count and name
    ]
    if not found:
        raise ValueError(f"{type(lm).__name__}: no list of {count} decoder layers in its modules")
    return min(found, key=lambda name: (name.count("."), name))


def submodule(root: nn.Module, path: str) -> nn.Module:
    """``root``'s module at a dotted ``path``."""
    for part in path.split("."):
        root = getattr(root, part)
    return root


class MediaState:
    """The latents of the images of the current forward and, per text token, the image it
    follows (1-based; 0 before the first image), set by :meth:`hook` from the ``input_ids`` of
    each language-model call: counted from the first token, or continued from the tokens a KV
    cache already holds (the tokens ``generate`` adds follow the last image)."""

    def __init__(self, media_token_id: int) -> None:
        self.media_token_id = media_token_id
        self.media: torch.Tensor | None = None
        self.text_time: torch.Tensor | None = None
        self.last: torch.Tensor | None = None

    @contextmanager
    def conditioned(self, media: torch.Tensor) -> Iterator[None]:
        """Language-model calls inside see ``media`` (B, T, n, D)."""
        self.media, self.last = media, None
        try:
            yield
        finally:
            self.media = self.text_time = self.last = None

    def hook(self, module: nn.Module, args: tuple, kwargs: dict) -> None:
        """Forward pre-hook of the language model: each token's image from ``input_ids``."""
        if self.media is None:
            raise RuntimeError("the Flamingo language model runs only inside its media")
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is None:
            raise ValueError("the Flamingo language model needs input_ids (its <image> tokens)")
        cache = kwargs.get("cache", kwargs.get("past_key_values"))  # transformers 5.x: cache
        cached = cache is not None and cache.get_seq_length() > 0
        time = (ids == self.media_token_id).long().cumsum(-1)
        if cached and self.last is not None:
            time = time + self.last
        self.text_time, self.last = time, time[:, -1:]

    def batch(self, rows: int) -> torch.Tensor:
        """The media for ``rows`` language rows (``generate``'s beams repeat each row)."""
        media = self.media
        if media.shape[0] != rows:
            if rows % media.shape[0]:
                raise ValueError(f"{rows} text rows for {media.shape[0]} media rows")
            media = media.repeat_interleave(rows // media.shape[0], dim=0)
        return media


class FlamingoLayer(nn.Module):
    """A decoder layer with, where there is one, the gated cross-attention block before it
    (upstream's ``FlamingoLayer``: keys ``gated_cross_attn_layer.*``, ``decoder_layer.*``)."""

    def __init__(
        self, gated: GatedCrossAttentionBlock | None, layer: nn.Module, state: MediaState
    ) -> None:
        super().__init__()
        self.gated_cross_attn_layer = gated
        self.decoder_layer = layer
        self._state = state

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:  # what the model reads of its layers (attention_type, ...)
            return getattr(super().__getattr__("decoder_layer"), name)

    def forward(self, hidden_states: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if self.gated_cross_attn_layer is not None:
            state = self._state
            media = state.batch(hidden_states.shape[0]).to(hidden_states.dtype)
            hidden_states = self.gated_cross_attn_layer(hidden_states, media, state.text_time)
        return self.decoder_layer(hidden_states, *args, **kwargs)


class Flamingo(nn.Module):
    """Vision tower, resampler and language model with cross-attention (upstream's
    ``Flamingo``: keys ``vision_encoder.*``, ``perceiver.*``, ``lang_encoder.*``)."""

    def __init__(
        self,
        vision_encoder: nn.Module,
        lang_encoder: nn.Module,
        eoc_token_id: int,
        media_token_id: int,
        vis_dim: int,
        cross_attn_every_n_layers: int = 1,
    ) -> None:
        super().__init__()
        if cross_attn_every_n_layers < 1:
            raise ValueError(f"cross_attn_every_n_layers must be >= 1: {cross_attn_every_n_layers}")
        self.eoc_token_id = eoc_token_id
        self.media_token_id = media_token_id
        self.vision_encoder = vision_encoder
        self.perceiver = PerceiverResampler(vis_dim)
        self.lang_encoder = lang_encoder
        config = lang_encoder.config
        lang_dim = getattr(config, "d_model", None) or config.hidden_size
        self.state = MediaState(media_token_id)
        self.layers_path = decoder_layers_path(lang_encoder)
        """Where the decoder layers are (``gpt_neox.layers``, ``model.layers``, ...)."""
        parent_path, _, attr = self.layers_path.rpartition(".")
        parent = submodule(lang_encoder, parent_path) if parent_path else lang_encoder
        layers = getattr(parent, attr)
        wrapped = [
            FlamingoLayer(
                GatedCrossAttentionBlock(lang_dim, vis_dim)
                if (i + 1) % cross_attn_every_n_layers == 0
                else None,
                layer,
                self.state,
            )
            for i, layer in enumerate(layers)
        ]
        setattr(parent, attr, nn.ModuleList(wrapped))
        self.cross_attn_every_n_layers = cross_attn_every_n_layers
        lang_encoder.register_forward_pre_hook(self.state.hook, with_kwargs=True)

    def gated_layers(self) -> list[int]:
        """The indices of the decoder layers with a cross-attention block."""
        layers = submodule(self.lang_encoder, self.layers_path)
        return [i for i, layer in enumerate(layers) if layer.gated_cross_attn_layer is not None]

    def encode_images(self, pixels: torch.Tensor) -> torch.Tensor:
        """(N, C, H, W) preprocessed images -> (N, latents, D): the resampler's latents of the
        vision tower's patch tokens."""
        tokens = self.vision_encoder(pixels)[1]
        return self.perceiver(tokens[:, None, None])[:, 0]

    def position_ids(self, attention_mask: torch.Tensor) -> torch.Tensor:
        """Positions counted over each row's real tokens (left padding leaves them as
        unpadded)."""
        return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)

    def forward(
        self,
        media: torch.Tensor,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        **kwargs: Any,
    ) -> Any:
        """The language model's output for ``input_ids``, its tokens after each ``<image>``
        attending to that image's latents in ``media`` (B, T, latents, D)."""
        with self.state.conditioned(media):
            return self.lang_encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=self.position_ids(attention_mask),
                **kwargs,
            )

    def generate(
        self, media: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor, **kwargs
    ) -> torch.Tensor:
        """The language model's ``generate`` with the images in ``media``; it stops at
        ``<|endofchunk|>`` as upstream's does (``eos_token_id``)."""
        kwargs.setdefault("eos_token_id", self.eoc_token_id)
        with self.state.conditioned(media):
            return self.lang_encoder.generate(
                input_ids=input_ids, attention_mask=attention_mask, **kwargs
            )
