"""Random-weight Llama 4: a tiled vision tower with pixel shuffle, a mixture-of-experts decoder
with chunked attention and layers without RoPE."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer

SPECIALS = {
    "image_token": "<|image|>",
    "boi_token": "<|image_start|>",
    "eoi_token": "<|image_end|>",
    "patch_token": "<|patch|>",
}
"""Llama 4's named image tokens (``<|patch|>``: the one the features replace)."""
TILES = ["<|tile_x_separator|>", "<|tile_y_separator|>"]


def build_llama4(out: Path, texts: list[str]) -> None:
    """Llama 4: one 32 px tile of 16 patches shuffled to 4 image tokens, two decoder layers
    (the second a mixture of two experts), SentencePiece-style tokenizer."""
    tok = multimodal_tokenizer(texts, SPECIALS, style="sentencepiece", extra_tokens=TILES)
    vision = dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,  # the pixel-shuffle MLP's input: 4 x hidden_size
        image_size=32,
        patch_size=8,
        vision_output_dim=32,
        projector_input_dim=32,
        projector_output_dim=32,
        pixel_shuffle_ratio=0.5,
    )
    text = dict(
        hidden_size=32,
        intermediate_size=64,
        intermediate_size_mlp=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        num_local_experts=2,
        interleave_moe_layer_step=2,
        no_rope_layer_interval=2,
        attention_chunk_size=8192,
        **lm_config(tok),
    )
    config = tf.Llama4Config(
        vision_config=vision,
        text_config=text,
        boi_token_index=tok.boi_token_id,
        eoi_token_index=tok.eoi_token_id,
        image_token_index=tok.patch_token_id,
    )
    tf.Llama4ForConditionalGeneration(config).save_pretrained(out)
    images = tf.Llama4ImageProcessor(
        size={"height": 32, "width": 32}, max_patches=1, resize_to_max_canvas=False
    )
    tf.Llama4Processor(
        image_processor=images,
        tokenizer=tok,
        patch_size=8,
        pixel_shuffle_ratio=0.5,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<|image|>"),
    ).save_pretrained(out)
