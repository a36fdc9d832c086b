"""Random-weight FLAVA: image, text and multimodal encoders. ``FlavaForPreTraining`` carries
the ITM head (two logits); ``FlavaModel``'s feature methods project every token, and its
contrastive score reads the first."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import bert_tokenizer
from .sizes import TWO_LAYERS


def flava_config(tok) -> tf.FlavaConfig:
    """Two-layer FLAVA encoders on 32 px images in 8 px patches."""
    return tf.FlavaConfig(
        image_config=dict(TWO_LAYERS, image_size=32, patch_size=8),
        text_config=dict(TWO_LAYERS, vocab_size=len(tok), max_position_embeddings=64),
        multimodal_config=dict(TWO_LAYERS),
        image_codebook_config=dict(
            hidden_size=16, num_groups=1, num_blocks_per_group=1, vocab_size=64
        ),
        hidden_size=32,
        projection_dim=16,
    )


def save_flava(out: Path, texts: list[str], model_class: type) -> None:
    tok = bert_tokenizer(texts)
    model_class(flava_config(tok)).save_pretrained(out)
    images = tf.FlavaImageProcessor(
        size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32}
    )
    tf.FlavaProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)


def build_flava_itm(out: Path, texts: list[str]) -> None:
    """FLAVA's pre-training model: its ITM head scores each pair."""
    save_flava(out, texts, tf.FlavaForPreTraining)


def build_flava(out: Path, texts: list[str]) -> None:
    """FLAVA's base model: its contrastive features (first token of each projection)."""
    save_flava(out, texts, tf.FlavaModel)
