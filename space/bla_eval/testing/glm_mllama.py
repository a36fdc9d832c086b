"""Random-weight GLM-4.1V (multimodal RoPE, image start and end tokens) and Llama 3.2 Vision
(Mllama: tiled images seen through cross-attention layers)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

GLM_SPECIALS = {
    "image_token": "<|image|>",
    "video_token": "<|video|>",
    "image_start_token": "<|begin_of_image|>",
    "image_end_token": "<|end_of_image|>",
}
"""GLM-4.1V's named vision tokens."""


def build_glm4v(out: Path, texts: list[str]) -> None:
    """GLM-4.1V: a Qwen-style dynamic-resolution tower, multimodal RoPE, a GLM-4 decoder."""
    tok = multimodal_tokenizer(
        texts, GLM_SPECIALS, extra_tokens=["<|begin_of_video|>", "<|end_of_video|>"]
    )
    ids = {
        "image_token_id": tok.image_token_id,
        "video_token_id": tok.video_token_id,
        "image_start_token_id": tok.image_start_token_id,
        "image_end_token_id": tok.image_end_token_id,
        "video_start_token_id": tok.convert_tokens_to_ids("<|begin_of_video|>"),
        "video_end_token_id": tok.convert_tokens_to_ids("<|end_of_video|>"),
    }
    rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
    text = dict(TWO_LAYERS, num_key_value_heads=1, rope_parameters=rope, **lm_config(tok))
    vision = dict(
        depth=2,
        hidden_size=32,
        intermediate_size=64,
        num_heads=2,
        patch_size=8,
        image_size=32,
        out_hidden_size=32,
    )
    config = tf.Glm4vConfig(vision_config=vision, text_config=text, **ids)
    tf.Glm4vForConditionalGeneration(config).save_pretrained(out)
    images = tf.Glm4vImageProcessor(
        size={"shortest_edge": 32 * 32, "longest_edge": 48 * 48}, patch_size=8, merge_size=2
    )
    tf.Glm4vProcessor(
        image_processor=images,
        tokenizer=tok,
        video_processor=tf.Glm4vVideoProcessor(),
        chat_template=CHAT_TEMPLATE.replace(
            "<image>", "<|begin_of_image|><|image|><|end_of_image|>"
        ),
    ).save_pretrained(out)


def build_mllama(out: Path, texts: list[str]) -> None:
    """Mllama (Llama 3.2 Vision): up to 2 tiles of 32 px, one cross-attention layer, a
    SentencePiece-style tokenizer."""
    tok = multimodal_tokenizer(texts, {"image_token": "<|image|>"}, style="sentencepiece")
    vision = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_global_layers=1,
        attention_heads=2,
        image_size=32,
        patch_size=8,
        max_num_tiles=2,
        vision_output_dim=64,
        intermediate_layers_indices=[0],
        supported_aspect_ratios=[[1, 1], [1, 2], [2, 1]],
    )
    text = dict(
        TWO_LAYERS,
        num_key_value_heads=1,
        cross_attention_layers=[1],
        **lm_config(tok),
    )
    config = tf.MllamaConfig(
        vision_config=vision, text_config=text, image_token_index=tok.image_token_id
    )
    tf.MllamaForConditionalGeneration(config).save_pretrained(out)
    images = tf.MllamaImageProcessor(size={"height": 32, "width": 32}, max_image_tiles=2)
    tf.MllamaProcessor(
        image_processor=images,
        tokenizer=tok,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<|image|>"),
    ).save_pretrained(out)
