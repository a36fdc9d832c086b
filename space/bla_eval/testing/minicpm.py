"""Random-weight MiniCPM-V 4.6: a SigLIP-style NaViT tower with a window-attention merger inside
it, an MLP merger, and a Qwen3.5 decoder (linear-attention layers). Its outer
``get_image_features`` takes ``*args, **kwargs`` and hands them to the base model's."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import QWEN_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

SPECIALS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "image_start_token": "<image>",
    "image_end_token": "</image>",
    "slice_start_token": "<slice>",
    "slice_end_token": "</slice>",
    "image_id_start_token": "<image_id>",
    "image_id_end_token": "</image_id>",
}
"""The named image tokens MiniCPM-V's processor reads from its tokenizer."""
TEMPLATE = QWEN_TEMPLATE.replace("<|vision_start|><|image_pad|><|vision_end|>", "<|image_pad|>")
"""The ChatML-style turns, one image placeholder where the message has its image."""


def build_minicpmv4_6(out: Path, texts: list[str]) -> None:
    """MiniCPM-V 4.6 on 112 px slices of 14 px patches (4 image tokens each), no slicing."""
    tok = multimodal_tokenizer(texts, SPECIALS)
    text = dict(
        TWO_LAYERS,
        **lm_config(tok),
        num_key_value_heads=1,
        head_dim=16,
        layer_types=["linear_attention", "full_attention"],
        linear_key_head_dim=8,
        linear_value_head_dim=8,
        linear_num_key_heads=2,
        linear_num_value_heads=2,
    )
    vision = dict(TWO_LAYERS, patch_size=14, image_size=112, insert_layer_id=0)
    config = tf.MiniCPMV4_6Config(
        text_config=dict(text, model_type="qwen3_5_text"),
        vision_config=vision,
        insert_layer_id=0,
        image_size=112,
        image_token_id=tok.image_token_id,
        video_token_id=tok.video_token_id,
    )
    tf.MiniCPMV4_6ForConditionalGeneration(config).save_pretrained(out)
    images = tf.MiniCPMV4_6ImageProcessor(scale_resolution=112, patch_size=14, slice_mode=False)
    tf.MiniCPMV4_6Processor(
        image_processor=images,
        video_processor=tf.MiniCPMV4_6VideoProcessor(),
        tokenizer=tok,
        chat_template=TEMPLATE,
    ).save_pretrained(out)
