"""Random-weight Idefics2 (Perceiver resampler) and SmolVLM (its own model type and processor),
images nested per prompt (Idefics3: :mod:`.generative`)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .generative import SMOLVLM_CHAT_TEMPLATE
from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS

MARKERS = ["<fake_token_around_image>", "<end_of_utterance>", "<global-img>"]
"""The Idefics tokenizers' image boundary, end-of-turn and global-image tokens."""


def build_idefics2(out: Path, texts: list[str]) -> None:
    """Idefics2: a SigLIP tower resampled to 4 latents per image, a Mistral decoder."""
    specials = {"image_token": "<image>", "image_boundary_token": "<fake_token_around_image>"}
    tok = multimodal_tokenizer(texts, specials, extra_tokens=MARKERS)
    mistral = dict(TWO_LAYERS, num_key_value_heads=1, **lm_config(tok), model_type="mistral")
    config = tf.Idefics2Config(
        vision_config=TINY_VISION,
        perceiver_config=dict(
            hidden_size=32,
            resampler_n_latents=4,
            resampler_depth=1,
            resampler_n_heads=2,
            resampler_head_dim=8,
            num_key_value_heads=1,
        ),
        text_config=mistral,
        image_token_id=tok.image_token_id,
    )
    tf.Idefics2ForConditionalGeneration(config).save_pretrained(out)
    images = tf.Idefics2ImageProcessor(
        size={"shortest_edge": 32, "longest_edge": 32}, do_image_splitting=False
    )
    tf.Idefics2Processor(
        image_processor=images, tokenizer=tok, image_seq_len=4, chat_template=CHAT_TEMPLATE
    ).save_pretrained(out)


def build_smolvlm(out: Path, texts: list[str]) -> None:
    """SmolVLM (``model_type: smolvlm``) with SmolVLM-Instruct's chat template."""
    tok = multimodal_tokenizer(texts, {"image_token": "<image>"}, extra_tokens=MARKERS)
    llama = dict(TWO_LAYERS, num_key_value_heads=1, **lm_config(tok), model_type="llama")
    config = tf.SmolVLMConfig(
        vision_config=TINY_VISION,
        text_config=llama,
        scale_factor=2,
        image_token_id=tok.image_token_id,
    )
    tf.SmolVLMForConditionalGeneration(config).save_pretrained(out)
    images = tf.SmolVLMImageProcessor(
        size={"longest_edge": 32}, max_image_size={"longest_edge": 32}, do_image_splitting=False
    )
    tf.SmolVLMProcessor(
        image_processor=images,
        tokenizer=tok,
        video_processor=tf.SmolVLMVideoProcessor(),
        image_seq_len=4,
        chat_template=SMOLVLM_CHAT_TEMPLATE,
    ).save_pretrained(out)
