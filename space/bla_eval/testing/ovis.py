"""A random-weight Ovis2: a visual vocabulary (each patch a soft mixture of visual words) with
indicator tokens around the image, a Qwen2 decoder."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

INDICATORS = ["<IMG_START>", "<IMG_GRID>", "<IMG_COL>", "<IMG_ROW>", "<IMG_END>"]
"""The visual indicator tokens, in the config's order."""


def build_ovis2(out: Path, texts: list[str]) -> None:
    """Ovis2 on 32 px images in 8 px patches (16 visual tokens, a 64-word visual vocabulary)."""
    tok = multimodal_tokenizer(
        texts, {"image_token": "<image>"}, extra_tokens=["<IMG_ATOM>", *INDICATORS]
    )
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8, vocab_size=64, hidden_stride=1)
    qwen2 = dict(TWO_LAYERS, num_key_value_heads=1, **lm_config(tok), model_type="qwen2")
    config = tf.Ovis2Config(
        vision_config=vision,
        text_config=qwen2,
        image_token_id=tok.convert_tokens_to_ids("<IMG_ATOM>"),
        visual_indicator_token_ids=tok.convert_tokens_to_ids(INDICATORS),
        vocab_size=len(tok),
        hidden_size=32,
    )
    tf.Ovis2ForConditionalGeneration(config).save_pretrained(out)
    images = tf.Ovis2ImageProcessor(size={"height": 32, "width": 32}, crop_to_patches=False)
    tf.Ovis2Processor(
        image_processor=images, tokenizer=tok, image_seq_length=16, chat_template=CHAT_TEMPLATE
    ).save_pretrained(out)
