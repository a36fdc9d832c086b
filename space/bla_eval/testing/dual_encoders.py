"""Random-weight dual encoders: CLIP (any size), SigLIP and open_clip's CLIP."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
import transformers as tf

from .processors import (
    CLIP_TOKEN_IDS,
    bert_tokenizer,
    bpe_tokenizer,
    image_processor,
    multimodal_tokenizer,
    token_ids,
    train_clip_tokenizer,
)
from .sizes import TINY_LAYERS, TINY_VISION, TWO_LAYERS


def tiny_clip_config(layers: dict[str, int] = TINY_LAYERS) -> tf.CLIPConfig:
    """A CLIP config with ``layers`` in both towers, 32 px images and a 2000-token vocabulary."""
    return tf.CLIPConfig(
        text_config=dict(layers, vocab_size=2000, **CLIP_TOKEN_IDS),
        vision_config=dict(layers, image_size=32, patch_size=8),
        projection_dim=16,
    )


def save_random_clip(
    out: Path, sentences: Sequence[str], config=None, seed: int | None = 0
) -> Path:
    """Save a randomly initialised CLIP (default: ViT-B/32 sizes) with processor into ``out``;
    torch seeded with ``seed`` first (None: the caller's generator as it stands)."""
    config = config or tf.CLIPConfig()
    tokenizer = train_clip_tokenizer(sentences, config.text_config.vocab_size)
    config.text_config.bos_token_id = tokenizer.bos_token_id
    config.text_config.eos_token_id = tokenizer.eos_token_id  # pooled at the first EOS
    config.text_config.pad_token_id = tokenizer.pad_token_id
    if seed is not None:
        torch.manual_seed(seed)
    tf.CLIPModel(config).save_pretrained(out)
    size = config.vision_config.image_size
    processor = tf.CLIPImageProcessor(
        size={"shortest_edge": size}, crop_size={"height": size, "width": size}
    )
    tf.CLIPProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(out)
    return out


def build_clip(out: Path, texts: list[str]) -> None:
    """A two-layer CLIP (``save_random_clip`` with ``tiny_clip_config(TWO_LAYERS)``), drawn from
    the caller's torch generator."""
    save_random_clip(out, texts, tiny_clip_config(TWO_LAYERS), seed=None)


def build_siglip(out: Path, texts: list[str]) -> None:
    """A two-layer SigLIP with a BPE tokenizer (64 text positions)."""
    tok = bpe_tokenizer(texts)
    text = dict(TWO_LAYERS, vocab_size=len(tok), max_position_embeddings=64, **token_ids(tok))
    config = tf.SiglipConfig(text_config=text, vision_config=TINY_VISION)
    tf.SiglipModel(config).save_pretrained(out)
    processor = image_processor(tf.SiglipImageProcessor)
    tf.SiglipProcessor(image_processor=processor, tokenizer=tok).save_pretrained(out)


def build_open_clip(out: Path, texts: list[str], context_length: int = 77) -> None:
    """A one-layer open_clip CLIP saved as ``open_clip_config.json`` + safetensors weights
    (open_clip's own tokenizer: ``texts`` are not used), its text tower ``context_length``
    tokens long (longer sentences are cut to it)."""
    import open_clip
    from safetensors.torch import save_file

    model_cfg = {
        "embed_dim": 16,
        "vision_cfg": {
            "image_size": 32,
            "layers": 1,
            "width": 32,
            "patch_size": 8,
            "head_width": 16,
        },
        "text_cfg": {
            "context_length": context_length,
            "vocab_size": 49408,
            "width": 32,
            "heads": 2,
            "layers": 1,
        },
    }
    out.mkdir(parents=True)
    config = {"model_cfg": model_cfg, "preprocess_cfg": {}}
    (out / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(open_clip.model.CLIP(**model_cfg).state_dict(), out / "open_clip_model.safetensors")


def build_siglip2(out: Path, texts: list[str]) -> None:
    """A two-layer SigLIP 2 with its NaFlex image processor (variable patches, patch mask)."""
    tok = multimodal_tokenizer(texts, style="sentencepiece")
    text = dict(TWO_LAYERS, vocab_size=len(tok), max_position_embeddings=64, **token_ids(tok))
    vision = dict(TWO_LAYERS, num_patches=16, patch_size=8)
    tf.Siglip2Model(tf.Siglip2Config(text_config=text, vision_config=vision)).save_pretrained(out)
    images = tf.Siglip2ImageProcessor(patch_size=8, max_num_patches=16)
    tf.Siglip2Processor(image_processor=images, tokenizer=tok).save_pretrained(out)


def build_metaclip_2(out: Path, texts: list[str]) -> None:
    """A two-layer MetaCLIP 2 (CLIP's architecture and processor, its own model type)."""
    tokenizer = train_clip_tokenizer(texts, 2000)
    text = dict(TWO_LAYERS, vocab_size=2000, **token_ids(tokenizer))
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    config = tf.MetaClip2Config(text_config=text, vision_config=vision, projection_dim=16)
    tf.MetaClip2Model(config).save_pretrained(out)
    tf.CLIPProcessor(image_processor=clip_images(), tokenizer=tokenizer).save_pretrained(out)


def build_align(out: Path, texts: list[str]) -> None:
    """A tiny ALIGN (EfficientNet image tower, BERT text tower)."""
    tok = bert_tokenizer(texts)
    vision = dict(image_size=32, hidden_dim=64, num_hidden_layers=2, width_coefficient=0.1)
    vision["depth_coefficient"] = 0.1
    text = dict(TWO_LAYERS, vocab_size=len(tok))
    # ALIGN projects only the text: to the image tower's pooled width (32 here)
    config = tf.AlignConfig(text_config=text, vision_config=vision, projection_dim=32)
    model = tf.AlignModel(config)
    for module in model.vision_model.modules():  # keep the tiny tower's activations O(1)
        if isinstance(module, torch.nn.Conv2d):
            torch.nn.init.kaiming_normal_(module.weight)
    model.save_pretrained(out)
    images = tf.EfficientNetImageProcessor(
        size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32}
    )
    tf.AlignProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)


def build_altclip(out: Path, texts: list[str]) -> None:
    """A tiny AltCLIP (XLM-R text tower, SentencePiece-style tokenizer)."""
    tok = multimodal_tokenizer(texts, style="sentencepiece")
    text = dict(TWO_LAYERS, vocab_size=len(tok), project_dim=16, pad_token_id=tok.pad_token_id)
    text["max_position_embeddings"] = 80
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    config = tf.AltCLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    tf.AltCLIPModel(config).save_pretrained(out)
    tf.AltCLIPProcessor(image_processor=clip_images(), tokenizer=tok).save_pretrained(out)


def build_chinese_clip(out: Path, texts: list[str]) -> None:
    """A tiny Chinese-CLIP (BERT text tower, token type ids)."""
    tok = bert_tokenizer(texts)
    text = dict(TWO_LAYERS, vocab_size=len(tok))
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    config = tf.ChineseCLIPConfig(text_config=text, vision_config=vision, projection_dim=16)
    tf.ChineseCLIPModel(config).save_pretrained(out)
    images = tf.ChineseCLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    tf.ChineseCLIPProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)


def build_clipseg(out: Path, texts: list[str]) -> None:
    """A tiny CLIPSeg saved as the class its released repos declare
    (``CLIPSegForImageSegmentation``; its CLIP towers score, the decoder is not used)."""
    tokenizer = train_clip_tokenizer(texts, 2000)
    text = dict(TWO_LAYERS, vocab_size=2000, **token_ids(tokenizer))
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    config = tf.CLIPSegConfig(
        text_config=text, vision_config=vision, projection_dim=16, extract_layers=[1, 2]
    )
    tf.CLIPSegForImageSegmentation(config).save_pretrained(out)
    images = tf.ViTImageProcessor(size={"height": 32, "width": 32})
    tf.CLIPSegProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(out)


def build_blip_contrastive(out: Path, texts: list[str]) -> None:
    """BLIP's base model (``BlipModel``: image and text features, compared by cosine)."""
    from .itm import build_blip_itm

    build_blip_itm(out, texts, model_class=tf.BlipModel)


def clip_images() -> tf.CLIPImageProcessor:
    """CLIP's image processor at 32 px."""
    return tf.CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
