"""Random-weight OWL-ViT and OWLv2: open-vocabulary detectors whose CLIP-style towers are dual
encoders, the text tower 16 positions long (BLA's longer sentences are cut to it). Saved as the
detection classes the released repos declare (``google/owlvit-*``, ``google/owlv2-*``)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import token_ids, train_clip_tokenizer
from .sizes import TWO_LAYERS

TEXT_POSITIONS = 16
"""The released text towers' length."""


def _save(out: Path, texts: list[str], config_class, model_class, images_class, processor_class):
    tok = train_clip_tokenizer(texts, 2000)
    tok.model_max_length = TEXT_POSITIONS
    text = dict(
        TWO_LAYERS,
        vocab_size=2000,
        max_position_embeddings=TEXT_POSITIONS,
        **token_ids(tok),
    )
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    model_class(
        config_class(text_config=text, vision_config=vision, projection_dim=16)
    ).save_pretrained(out)
    square = {"height": 32, "width": 32}
    processor_class(
        image_processor=images_class(size=square, crop_size=square), tokenizer=tok
    ).save_pretrained(out)


def build_owlvit(out: Path, texts: list[str]) -> None:
    """OWL-ViT's detector (``OwlViTForObjectDetection``), a CLIP tokenizer of 16 positions."""
    _save(
        out,
        texts,
        tf.OwlViTConfig,
        tf.OwlViTForObjectDetection,
        tf.OwlViTImageProcessor,
        tf.OwlViTProcessor,
    )


def build_owlv2(out: Path, texts: list[str]) -> None:
    """OWLv2's detector (``Owlv2ForObjectDetection``), its padding image processor."""
    _save(
        out,
        texts,
        tf.Owlv2Config,
        tf.Owlv2ForObjectDetection,
        tf.Owlv2ImageProcessor,
        tf.Owlv2Processor,
    )
