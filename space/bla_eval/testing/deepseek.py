"""Random-weight DeepSeek-VL and Janus (DeepSeek's SigLIP-tower decoders; Janus also has a VQ
tokenizer for generating images), each with a fixed number of image tokens."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS

IMAGE_TOKENS = 16
"""Image tokens per image: (32 px / 8 px)^2 patches."""


def llama(tok: tf.PreTrainedTokenizerFast) -> dict:
    """A two-layer Llama text config on ``tok``."""
    return dict(TWO_LAYERS, num_key_value_heads=1, model_type="llama", **lm_config(tok))


def build_deepseek_vl(out: Path, texts: list[str]) -> None:
    """DeepSeek-VL: a SigLIP tower, an MLP aligner, a Llama decoder (SentencePiece-style)."""
    tok = multimodal_tokenizer(texts, {"image_token": "<image_placeholder>"}, style="sentencepiece")
    vision = dict(TINY_VISION, model_type="siglip_vision_model")
    config = tf.DeepseekVLConfig(
        text_config=llama(tok), vision_config=vision, image_token_id=tok.image_token_id
    )
    tf.DeepseekVLForConditionalGeneration(config).save_pretrained(out)
    tf.DeepseekVLProcessor(
        image_processor=tf.DeepseekVLImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tok,
        num_image_tokens=IMAGE_TOKENS,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<image_placeholder>"),
    ).save_pretrained(out)


def build_janus(out: Path, texts: list[str]) -> None:
    """Janus: a SigLIP-style tower and aligner for understanding, a tiny VQ model for
    generation, ``<begin_of_image>`` / ``<end_of_image>`` around the image tokens."""
    specials = {
        "image_token": "<image_placeholder>",
        "boi_token": "<begin_of_image>",
        "eoi_token": "<end_of_image>",
    }
    tok = multimodal_tokenizer(texts, specials)
    vision = dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=32,
        num_image_tokens=IMAGE_TOKENS,
    )
    vq = dict(
        embed_dim=8,
        num_embeddings=16,
        latent_channels=8,
        base_channels=32,
        channel_multiplier=[1, 2],
        num_res_blocks=1,
        num_patches=4,
        projection_dim=32,
        image_token_embed_dim=32,
    )
    config = tf.JanusConfig(
        text_config=llama(tok),
        vision_config=vision,
        vq_config=vq,
        image_token_id=tok.image_token_id,
    )
    tf.JanusForConditionalGeneration(config).save_pretrained(out)
    tf.JanusProcessor(
        image_processor=tf.JanusImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tok,
        num_image_tokens=IMAGE_TOKENS,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<image_placeholder>"),
    ).save_pretrained(out)
