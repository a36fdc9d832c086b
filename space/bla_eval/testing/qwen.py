"""Random-weight Qwen-style decoders with multimodal RoPE and a dynamic-resolution vision tower:
Qwen2.5-VL, Qwen3-VL, Qwen3.5 (hybrid linear attention) and GLM-4.1V (Qwen2-VL itself:
:mod:`.generative`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import transformers as tf

from .processors import QWEN_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

QWEN_SPECIALS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "vision_start_token": "<|vision_start|>",
    "vision_end_token": "<|vision_end|>",
}
"""The Qwen-VL tokenizers' named vision tokens."""
VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=8)
"""A two-block vision tower on 8 px patches, two-by-two merged."""


def qwen_tokenizer(texts: list[str], style: str = "byte-level") -> Any:
    """A tokenizer with the Qwen-VL vision tokens."""
    return multimodal_tokenizer(texts, QWEN_SPECIALS, style=style)


def token_ids(tok: Any) -> dict[str, int]:
    """The config's ids of the vision tokens."""
    names = ["image_token", "video_token", "vision_start_token", "vision_end_token"]
    return {f"{n}_id": tok.convert_tokens_to_ids(QWEN_SPECIALS[n]) for n in names}


def image_processor(patch_size: int = 8) -> Any:
    """Qwen2-VL's image processor: 32 to 48 px images in ``patch_size`` patches."""
    return tf.Qwen2VLImageProcessor(
        min_pixels=32 * 32, max_pixels=48 * 48, patch_size=patch_size, merge_size=2
    )


def text_sizes(**more: Any) -> dict[str, Any]:
    """A two-layer text model with multimodal RoPE over head size 16."""
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    return dict(TWO_LAYERS, num_key_value_heads=1, head_dim=16, rope_parameters=rope, **more)


def build_qwen2_5_vl(out: Path, texts: list[str]) -> None:
    """Qwen2.5-VL (windowed vision attention, multimodal RoPE)."""
    tok = qwen_tokenizer(texts)
    vision = dict(VISION, out_hidden_size=32, window_size=16, fullatt_block_indexes=[1])
    config = tf.Qwen2_5_VLConfig(
        vision_config=vision, text_config=text_sizes(**lm_config(tok)), **token_ids(tok)
    )
    tf.Qwen2_5_VLForConditionalGeneration(config).save_pretrained(out)
    tf.Qwen2_5_VLProcessor(
        image_processor=image_processor(),
        tokenizer=tok,
        video_processor=tf.Qwen2VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE,
    ).save_pretrained(out)


def build_qwen3_vl(out: Path, texts: list[str]) -> None:
    """Qwen3-VL (DeepStack vision features into the first text layers, interleaved MRoPE)."""
    tok = qwen_tokenizer(texts)
    _save_qwen3(out, tok, tf.Qwen3VLConfig, tf.Qwen3VLForConditionalGeneration, {})


def build_qwen3_5(out: Path, texts: list[str]) -> None:
    """Qwen3.5 (Gated DeltaNet linear-attention layers beside full attention)."""
    tok = qwen_tokenizer(texts)
    linear = dict(
        layer_types=["linear_attention", "full_attention"],
        linear_key_head_dim=8,
        linear_value_head_dim=8,
        linear_num_key_heads=2,
        linear_num_value_heads=2,
    )
    _save_qwen3(out, tok, tf.Qwen3_5Config, tf.Qwen3_5ForConditionalGeneration, linear)


def _save_qwen3(out: Path, tok: Any, config_class: Any, model_class: Any, more: dict) -> None:
    vision = dict(VISION, out_hidden_size=32, num_position_embeddings=16)
    if config_class is tf.Qwen3VLConfig:
        vision["deepstack_visual_indexes"] = [0]
    text = text_sizes(**lm_config(tok), **more)
    text["rope_parameters"] = dict(text["rope_parameters"], mrope_interleaved=True)
    config = config_class(vision_config=vision, text_config=text, **token_ids(tok))
    model_class(config).save_pretrained(out)
    tf.Qwen3VLProcessor(
        image_processor=image_processor(),
        tokenizer=tok,
        video_processor=tf.Qwen3VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE,
    ).save_pretrained(out)
