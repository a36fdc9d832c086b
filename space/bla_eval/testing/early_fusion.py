"""Random-weight early-fusion models: images quantised by a VQ tokenizer into tokens of the
decoder's own vocabulary (Chameleon)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

CODEBOOK = 16
"""Entries of the tiny VQ codebook (each a token ``IMGIMG<letters>Z`` of the vocabulary)."""


def vq_token(index: int) -> str:
    """Chameleon's name of codebook entry ``index``: its digits as letters (0 -> A)."""
    return "IMGIMG" + "".join(chr(ord("A") + int(d)) for d in str(index)) + "Z"


def build_chameleon(out: Path, texts: list[str]) -> None:
    """Chameleon: a 32 px image quantised to 8 x 8 codebook tokens between ``<racm3:break>`` and
    ``<eoss>``, a Llama-style decoder with query-key norms."""
    specials = {"image_token": "<image>", "boi_token": "<racm3:break>", "eoi_token": "<eoss>"}
    codes = [vq_token(i) for i in range(CODEBOOK)]
    tok = multimodal_tokenizer(texts, specials, extra_tokens=codes)
    vq = dict(
        embed_dim=8,
        num_embeddings=CODEBOOK,
        latent_channels=8,
        resolution=32,
        base_channels=32,
        channel_multiplier=[1, 1, 2],
        num_res_blocks=1,
        attn_resolutions=[],
    )
    config = tf.ChameleonConfig(
        **TWO_LAYERS,
        num_key_value_heads=1,
        vq_config=vq,
        vocabulary_map=tok.get_vocab(),
        **lm_config(tok),
    )
    tf.ChameleonForConditionalGeneration(config).save_pretrained(out)
    images = tf.ChameleonImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    tf.ChameleonProcessor(
        image_processor=images, tokenizer=tok, image_seq_length=64
    ).save_pretrained(out)
