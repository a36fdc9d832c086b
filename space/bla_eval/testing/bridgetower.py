"""Random-weight BridgeTower: a CLIP-style vision tower and a RoBERTa text tower bridged into
cross-modal layers; its retrieval head two logits (``BridgeTowerForImageAndTextRetrieval``), its
contrastive model unit-norm text and image embeddings (``BridgeTowerForContrastiveLearning``)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import bpe_tokenizer
from .sizes import TWO_LAYERS


def build_bridgetower_itm(out: Path, texts: list[str]) -> None:
    """BridgeTower's retrieval head on 32 px images in 8 px patches (64-wide towers: the
    vision tower's heads are 64 wide), a byte-level BPE."""
    save_bridgetower(out, texts, tf.BridgeTowerForImageAndTextRetrieval)


def build_bridgetower_contrastive(out: Path, texts: list[str]) -> None:
    """BridgeTower's contrastive model: its own text and image projections of each pair."""
    save_bridgetower(out, texts, tf.BridgeTowerForContrastiveLearning)


def save_bridgetower(out: Path, texts: list[str], model_class: type) -> None:
    tok = bpe_tokenizer(texts)
    text = dict(TWO_LAYERS, hidden_size=64, vocab_size=len(tok), max_position_embeddings=64)
    vision = dict(hidden_size=64, num_hidden_layers=2, image_size=32, patch_size=8)
    config = tf.BridgeTowerConfig(
        text_config=text,
        vision_config=vision,
        hidden_size=64,
        num_attention_heads=2,
        num_hidden_layers=2,
        contrastive_hidden_size=16,
        logit_scale_init_value=2.6592,  # the released contrastive checkpoint's config holds it
    )
    model_class(config).save_pretrained(out)
    images = tf.BridgeTowerImageProcessor(
        size={"shortest_edge": 32}, crop_size={"shortest_edge": 32}, size_divisor=8
    )
    tf.BridgeTowerProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)
