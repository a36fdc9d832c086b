"""Random-weight LLaVA descendants: a vision tower, a projector and a decoder, the image tokens
inline in the prompt (LLaVA-NeXT, LLaVA-OneVision, VipLLaVA, Mistral 3 with Pixtral's vision
tower, Aya Vision, InternVL, PerceptionLM; LLaVA itself: :mod:`.generative`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import transformers as tf

from .processors import CHAT_TEMPLATE, IMAGES_FIRST_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS

IMAGE = {"image_token": "<image>"}
CLIP_VISION = dict(TINY_VISION, projection_dim=16)
"""A two-layer CLIP tower on 32 px images, 8 px patches."""
GRID = [[32, 32], [32, 64], [64, 32]]
"""The any-resolution grid of the NeXT-style image processors (32 px tiles)."""


def llama(tok: Any, **more: Any) -> Any:
    """A two-layer Llama on ``tok``."""
    return tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok), **more)


def clip_images(cls: Any = tf.CLIPImageProcessor, **more: Any) -> Any:
    """A CLIP-style image processor at 32 px."""
    return cls(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, **more)


def build_llava_next(out: Path, texts: list[str]) -> None:
    """LLaVA-NeXT (any-resolution tiles, a newline embedding), SentencePiece-style tokenizer."""
    tok = multimodal_tokenizer(texts, IMAGE, style="sentencepiece")
    config = tf.LlavaNextConfig(
        vision_config=CLIP_VISION,
        text_config=llama(tok),
        image_token_index=tok.image_token_id,
        image_grid_pinpoints=GRID,
        vision_feature_layer=-1,
    )
    tf.LlavaNextForConditionalGeneration(config).save_pretrained(out)
    tf.LlavaNextProcessor(
        image_processor=tf.LlavaNextImageProcessor(
            size={"shortest_edge": 32},
            crop_size={"height": 32, "width": 32},
            image_grid_pinpoints=GRID,
        ),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=IMAGES_FIRST_TEMPLATE,
        num_additional_image_tokens=1,
    ).save_pretrained(out)


def build_llava_onevision(out: Path, texts: list[str]) -> None:
    """LLaVA-OneVision (any-resolution tiles, a Qwen2 decoder)."""
    tok = multimodal_tokenizer(texts, {**IMAGE, "video_token": "<video>"})
    qwen2 = tf.Qwen2Config(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    config = tf.LlavaOnevisionConfig(
        vision_config=dict(TINY_VISION, model_type="siglip_vision_model"),
        text_config=qwen2,
        image_token_index=tok.image_token_id,
        video_token_index=tok.video_token_id,
        image_grid_pinpoints=GRID,
        vision_feature_layer=-1,
    )
    tf.LlavaOnevisionForConditionalGeneration(config).save_pretrained(out)
    tf.LlavaOnevisionProcessor(
        image_processor=tf.LlavaOnevisionImageProcessor(
            size={"height": 32, "width": 32}, image_grid_pinpoints=GRID
        ),
        tokenizer=tok,
        video_processor=tf.LlavaOnevisionVideoProcessor(),
        num_image_tokens=16,
        vision_feature_select_strategy="full",
        chat_template=CHAT_TEMPLATE,
    ).save_pretrained(out)


def build_vipllava(out: Path, texts: list[str]) -> None:
    """VipLLaVA (features of several vision layers), LLaVA's processor, no chat template."""
    tok = multimodal_tokenizer(texts, IMAGE)
    config = tf.VipLlavaConfig(
        vision_config=dict(CLIP_VISION, num_hidden_layers=2),
        text_config=llama(tok),
        image_token_index=tok.image_token_id,
        vision_feature_layers=[-1, -2],
    )
    tf.VipLlavaForConditionalGeneration(config).save_pretrained(out)
    tf.LlavaProcessor(
        image_processor=clip_images(),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="full",
        num_additional_image_tokens=0,
    ).save_pretrained(out)


def build_mistral3(out: Path, texts: list[str]) -> None:
    """Mistral 3 (Pixtral vision tower, image breaks, patch merger), SentencePiece-style."""
    specials = {"image_token": "[IMG]"}
    tok = multimodal_tokenizer(
        texts, specials, style="sentencepiece", extra_tokens=["[IMG_BREAK]", "[IMG_END]"]
    )
    vision = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        head_dim=16,
        image_size=32,
        patch_size=8,
    )
    mistral = tf.MistralConfig(**TWO_LAYERS, num_key_value_heads=1, head_dim=16, **lm_config(tok))
    config = tf.Mistral3Config(
        vision_config=dict(vision, model_type="pixtral"),
        text_config=mistral,
        image_token_index=tok.image_token_id,
        spatial_merge_size=2,
        vision_feature_layer=-1,
    )
    tf.Mistral3ForConditionalGeneration(config).save_pretrained(out)
    tf.PixtralProcessor(
        image_processor=tf.PixtralImageProcessor(
            size={"longest_edge": 32}, patch_size={"height": 8, "width": 8}
        ),
        tokenizer=tok,
        patch_size=8,
        spatial_merge_size=2,
        chat_template=CHAT_TEMPLATE.replace("<image>", "[IMG]"),
    ).save_pretrained(out)


def build_aya_vision(out: Path, texts: list[str]) -> None:
    """Aya Vision (SigLIP tower, pixel-shuffle projector, Cohere 2 decoder)."""
    markers = ["<|START_OF_IMG|>", "<|END_OF_IMG|>", "<|IMG_PATCH|>", "<|IMG_LINE_BREAK|>"]
    tok = multimodal_tokenizer(texts, IMAGE, extra_tokens=markers)
    cohere = tf.Cohere2Config(
        **TWO_LAYERS, num_key_value_heads=1, **lm_config(tok), layer_types=["full_attention"] * 2
    )
    config = tf.AyaVisionConfig(
        vision_config=dict(TINY_VISION, model_type="siglip_vision_model"),
        text_config=cohere,
        image_token_index=tok.convert_tokens_to_ids("<|IMG_PATCH|>"),
        downsample_factor=2,
    )
    tf.AyaVisionForConditionalGeneration(config).save_pretrained(out)
    tf.AyaVisionProcessor(
        image_processor=tf.GotOcr2ImageProcessor(
            size={"height": 32, "width": 32}, crop_to_patches=False
        ),
        tokenizer=tok,
        patch_size=8,
        img_size=32,
        downsample_factor=2,
        chat_template=CHAT_TEMPLATE,
    ).save_pretrained(out)


def build_internvl(out: Path, texts: list[str]) -> None:
    """InternVL (InternViT tower, pixel shuffle, Qwen2 decoder)."""
    specials = {
        "start_image_token": "<img>",
        "end_image_token": "</img>",
        "context_image_token": "<IMG_CONTEXT>",
        "video_token": "<video>",
    }
    tok = multimodal_tokenizer(texts, specials)
    qwen2 = tf.Qwen2Config(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    vision = dict(TWO_LAYERS, image_size=[32, 32], patch_size=[8, 8])
    config = tf.InternVLConfig(
        vision_config=vision,
        text_config=qwen2,
        image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
        image_seq_length=4,
    )
    tf.InternVLForConditionalGeneration(config).save_pretrained(out)
    tf.InternVLProcessor(
        image_processor=tf.GotOcr2ImageProcessor(
            size={"height": 32, "width": 32}, crop_to_patches=False
        ),
        tokenizer=tok,
        video_processor=tf.InternVLVideoProcessor(),
        image_seq_length=4,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<IMG_CONTEXT>"),
    ).save_pretrained(out)
