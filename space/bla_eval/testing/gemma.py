"""Random-weight Gemma-family vision-language models: Gemma 3 (bidirectional attention over the
image, sliding-window layers), PaliGemma (prefix-LM) and LFM2-VL (SigLIP 2 NaFlex tower, a
hybrid convolution decoder), all with SentencePiece-style tokenizers (``▁yes``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS

GEMMA_TEXT = dict(TWO_LAYERS, num_key_value_heads=1, head_dim=16, query_pre_attn_scalar=16)
"""A two-layer Gemma decoder."""


def build_gemma3(out: Path, texts: list[str], *, sliding_window: int = 512) -> None:
    """Gemma 3: a SigLIP tower pooled to 4 tokens per image, one full and one sliding layer
    (``sliding_window`` tokens)."""
    specials = {"image_token": "<image_soft_token>", "boi_token": "<start_of_image>"}
    tok = multimodal_tokenizer(
        texts, {**specials, "eoi_token": "<end_of_image>"}, style="sentencepiece"
    )
    text = dict(
        GEMMA_TEXT,
        **lm_config(tok),
        sliding_window=sliding_window,
        layer_types=["sliding_attention", "full_attention"],
    )
    config = tf.Gemma3Config(
        text_config=text,
        vision_config=dict(TINY_VISION, model_type="siglip_vision_model"),
        mm_tokens_per_image=4,
        boi_token_index=tok.boi_token_id,
        eoi_token_index=tok.eoi_token_id,
        image_token_index=tok.image_token_id,
    )
    tf.Gemma3ForConditionalGeneration(config).save_pretrained(out)
    tf.Gemma3Processor(
        image_processor=tf.Gemma3ImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tok,
        image_seq_length=4,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<start_of_image>"),
    ).save_pretrained(out)


def build_paligemma(out: Path, texts: list[str]) -> None:
    """PaliGemma: the image and the whole prompt attend to each other (no chat template)."""
    tok = paligemma_tokenizer(texts)
    tf.PaliGemmaForConditionalGeneration(paligemma_config(tok)).save_pretrained(out)
    tf.PaliGemmaProcessor(image_processor=paligemma_images(), tokenizer=tok).save_pretrained(out)


def paligemma_tokenizer(texts: list[str]) -> Any:
    """A SentencePiece-style tokenizer with PaliGemma's ``<image>`` token."""
    return multimodal_tokenizer(texts, {"image_token": "<image>"}, style="sentencepiece")


def paligemma_config(tok: Any) -> Any:
    """A PaliGemma config: a tiny Gemma on ``tok`` and a SigLIP tower on 32 px images."""
    return tf.PaliGemmaConfig(
        text_config=dict(GEMMA_TEXT, **lm_config(tok), model_type="gemma"),
        vision_config=dict(TINY_VISION, projection_dim=32),
        image_token_index=tok.image_token_id,
        projection_dim=32,
    )


def paligemma_images() -> Any:
    """PaliGemma's SigLIP image processor at 32 px (16 image tokens)."""
    images = tf.SiglipImageProcessor(size={"height": 32, "width": 32})
    images.image_seq_length = 16
    return images


def build_lfm2_vl(out: Path, texts: list[str]) -> None:
    """LFM2-VL: a SigLIP 2 NaFlex tower, pixel unshuffle, LFM2's convolution and attention
    layers."""
    specials = {"image_token": "<image>"}
    markers = ["<|image_start|>", "<|image_end|>", "<|img_thumbnail|>"]
    tok = multimodal_tokenizer(texts, specials, style="sentencepiece", extra_tokens=markers)
    text = dict(
        TWO_LAYERS,
        num_key_value_heads=1,
        **lm_config(tok),
        layer_types=["conv", "full_attention"],
    )
    vision = dict(TWO_LAYERS, num_patches=16, patch_size=8, model_type="siglip2_vision_model")
    config = tf.Lfm2VlConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tok.image_token_id,
        projector_hidden_size=32,
        downsample_factor=2,
    )
    tf.Lfm2VlForConditionalGeneration(config).save_pretrained(out)
    images = tf.Lfm2VlImageProcessor(
        encoder_patch_size=8,
        downsample_factor=2,
        do_image_splitting=False,
        min_image_tokens=4,
        max_image_tokens=4,
        max_num_patches=16,
        tile_size=32,
    )
    tf.Lfm2VlProcessor(
        image_processor=images, tokenizer=tok, chat_template=CHAT_TEMPLATE
    ).save_pretrained(out)
