"""Random-weight models with the sizes of released checkpoints, for the speed scripts: a LLaVA
with LLaVA-OneVision-0.5B's vision tower and decoder (SigLIP-so400m/14 at 384 px, Qwen2-0.5B),
one 384 px view per image, so each image gives the tower's real 729 image tokens (SmolVLM-256M's
sizes: :func:`.generative.save_smolvlm_shaped`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import transformers as tf

from ..protocols.templates import CAPTION_REQUEST, get_template
from .processors import bpe_tokenizer

SIGLIP_SO400M_384 = dict(
    hidden_size=1152,
    intermediate_size=4304,
    num_hidden_layers=27,
    num_attention_heads=16,
    image_size=384,
    patch_size=14,
)
"""SigLIP so400m patch14-384 (about 400M parameters): (384 / 14)^2 = 729 patches."""
QWEN2_0_5B = dict(
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    max_position_embeddings=32768,
    rope_theta=1000000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
)
"""Qwen2-0.5B, the decoder of LLaVA-OneVision-0.5B."""
QWEN2_VOCAB = 151936
CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>\n"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The ChatML template of LLaVA-OneVision's Qwen2 checkpoints (the image before its text)."""


def save_llava_so400m_shaped(out: Path, sentences: Sequence[str]) -> Path:
    """A random-weight LLaVA with SigLIP-so400m/14-384 and Qwen2-0.5B's sizes (vocabulary
    included); its tokenizer is trained on ``sentences`` and the prompts around them."""
    from jinja2 import Template

    template = Template(CHATML_TEMPLATE)
    turns = [get_template().chat(s) for s in sentences]
    request = [{"role": "user", "content": [{"type": "text", "text": CAPTION_REQUEST}]}]
    prompts = [template.render(messages=m, add_generation_prompt=True) for m in [*turns, request]]
    tok = bpe_tokenizer([*sentences, *prompts * 4])
    tok.add_special_tokens({"additional_special_tokens": ["<image>", "<|im_start|>", "<|im_end|>"]})
    text = tf.Qwen2Config(
        **QWEN2_0_5B,
        vocab_size=QWEN2_VOCAB,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    config = tf.LlavaConfig(
        vision_config=tf.SiglipVisionConfig(**SIGLIP_SO400M_384),
        text_config=text,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="full",
        image_seq_length=729,
    )
    tf.LlavaForConditionalGeneration(config).save_pretrained(out)
    size = SIGLIP_SO400M_384["image_size"]
    tf.LlavaProcessor(
        image_processor=tf.SiglipImageProcessor(size={"height": size, "width": size}),
        tokenizer=tok,
        patch_size=SIGLIP_SO400M_384["patch_size"],
        vision_feature_select_strategy="full",
        num_additional_image_tokens=0,
        chat_template=CHATML_TEMPLATE,
    ).save_pretrained(out)
    return out
