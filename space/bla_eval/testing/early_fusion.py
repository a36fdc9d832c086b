"""Random-weight early-fusion models: images quantised by a VQ tokenizer into tokens of the
decoder's own vocabulary (Chameleon, Emu3)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
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


EMU3_SPECIALS = {
    "image_token": "<image>",
    "boi_token": "<|image start|>",
    "eoi_token": "<|image end|>",
    "image_wrapper_token": "<|image token|>",
    "eof_token": "<|extra_201|>",
}
"""Emu3's named image tokens (``<|extra_200|>`` ends each row of image tokens)."""


def build_emu3(out: Path, texts: list[str]) -> None:
    """Emu3: a 32 px image quantised by a tiny VQ-VAE (8 x downsampling, as the processor
    assumes) to rows of codebook tokens, its size written before them, a Llama decoder."""
    codes = [f"<|visual token {i:06d}|>" for i in range(CODEBOOK)]
    tok = multimodal_tokenizer(texts, EMU3_SPECIALS, extra_tokens=["<|extra_200|>", *codes])
    vq = dict(
        codebook_size=CODEBOOK,
        embed_dim=8,
        latent_channels=8,
        base_channels=32,
        channel_multiplier=[1, 1, 1, 2],
        num_res_blocks=1,
        attn_resolutions=[],
        hidden_size=64,
        num_attention_heads=1,
    )
    text = dict(TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    config = tf.Emu3Config(vq_config=vq, text_config=text, vocabulary_map=tok.get_vocab())
    tf.Emu3ForConditionalGeneration(config).save_pretrained(out)
    images = tf.Emu3ImageProcessor(min_pixels=32 * 32, max_pixels=48 * 48, spatial_factor=8)
    tf.Emu3Processor(
        image_processor=images, tokenizer=tok, chat_template=CHAT_TEMPLATE
    ).save_pretrained(out)
