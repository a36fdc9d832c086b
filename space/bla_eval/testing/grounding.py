"""Random-weight captioning and grounding models with their own prompt conventions: Kosmos-2
(image embeddings at fixed positions of the prompt, location tokens)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import multimodal_tokenizer
from .sizes import TINY_VISION

KOSMOS2_QUERIES = 64
"""Kosmos-2's image latents: the processor's default ``num_image_tokens``, kept as the real
model has it (the engine passes no such option)."""


def build_kosmos2(out: Path, texts: list[str]) -> None:
    """Kosmos-2: a CLIP tower resampled to 64 latents placed after ``<image>``, a two-layer
    decoder, 16 patch-index tokens."""
    tok = multimodal_tokenizer(texts)
    processor = tf.Kosmos2Processor(
        image_processor=tf.CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
        num_patch_index_tokens=16,
    )
    text = dict(
        vocab_size=len(tok),
        embed_dim=32,
        layers=2,
        ffn_dim=64,
        attention_heads=2,
        max_position_embeddings=256,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    config = tf.Kosmos2Config(
        text_config=text, vision_config=TINY_VISION, latent_query_num=KOSMOS2_QUERIES
    )
    tf.Kosmos2ForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)


def build_florence2(out: Path, texts: list[str]) -> None:
    """Florence-2: a two-stage DaViT tower (16 patches and a pooled token before the prompt),
    a BART encoder-decoder."""
    tok = multimodal_tokenizer(texts, {"image_token": "<image>"})
    vision = dict(
        depths=[1, 1],
        patch_size=[7, 3],
        patch_stride=[4, 2],
        patch_padding=[3, 1],
        patch_prenorm=[False, True],
        embed_dim=[16, 32],
        num_heads=[2, 2],
        num_groups=[2, 2],
        window_size=4,
        projection_dim=32,
        max_position_embeddings=8,
        drop_path_rate=0.0,
    )
    bart = dict(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
    )
    config = tf.Florence2Config(
        text_config=bart, vision_config=vision, image_token_id=tok.image_token_id
    )
    tf.Florence2ForConditionalGeneration(config).save_pretrained(out)
    images = tf.CLIPImageProcessor(
        size={"height": 32, "width": 32},
        crop_size={"height": 32, "width": 32},
        do_center_crop=False,
    )
    images.image_seq_length = 17
    tf.Florence2Processor(image_processor=images, tokenizer=tok).save_pretrained(out)


def build_pix2struct(out: Path, texts: list[str]) -> None:
    """Pix2Struct (captioning, not VQA: a VQA checkpoint renders the prompt into the image with
    a font it downloads): variable-resolution patches, a T5-style decoder."""
    tok = multimodal_tokenizer(texts, style="sentencepiece")
    text = dict(
        vocab_size=len(tok),
        hidden_size=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    vision = dict(
        hidden_size=32,
        patch_embed_hidden_size=8 * 8 * 3,
        d_ff=64,
        d_kv=16,
        num_hidden_layers=2,
        num_attention_heads=2,
    )
    config = tf.Pix2StructConfig(text_config=text, vision_config=vision, is_vqa=False)
    tf.Pix2StructForConditionalGeneration(config).save_pretrained(out)
    # the processor asks for 2048 patches whatever the image processor's max_patches
    images = tf.Pix2StructImageProcessor(patch_size={"height": 8, "width": 8}, is_vqa=False)
    tf.Pix2StructProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)
