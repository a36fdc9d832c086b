"""Random-weight ViLT: one transformer over word and patch embeddings (no vision tower), its
retrieval head one logit (``ViltForImageAndTextRetrieval``)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import bert_tokenizer
from .sizes import TWO_LAYERS


def build_vilt_itm(out: Path, texts: list[str], text_positions: int = 64) -> None:
    """ViLT's retrieval head on 32 px images in 8 px patches, a BERT tokenizer whose limit is
    the model's ``text_positions`` (longer sentences are cut to it; 40 in the released ViLT)."""
    tok = bert_tokenizer(texts)
    tok.model_max_length = text_positions
    config = tf.ViltConfig(
        **TWO_LAYERS,
        vocab_size=len(tok),
        image_size=32,
        patch_size=8,
        max_position_embeddings=text_positions,
    )
    tf.ViltForImageAndTextRetrieval(config).save_pretrained(out)
    images = tf.ViltImageProcessor(size={"shortest_edge": 32}, size_divisor=8)
    tf.ViltProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)
