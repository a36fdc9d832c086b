"""Random-weight Phi multimodal models: Phi-4-multimodal (transformers' own, a causal-LM class
with a SigLIP image tower and an audio tower, its processor with an image and an audio
processor), and a Phi-3-vision-shaped remote-code model whose ``auto_map`` names only
``AutoModelForCausalLM`` (the pattern of Phi-3/3.5-vision, MiniCPM-V 2.x, InternVL's original
repositories)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

PHI_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<|image|>"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""Phi's turns: ``<|user|><|image|>...<|end|><|assistant|>``."""
AUDIO = dict(
    hidden_size=32,
    intermediate_size=64,
    num_blocks=1,
    num_attention_heads=2,
    ext_pw_out_channel=32,
    depthwise_separable_out_channel=32,
    nemo_conv_channels=32,
)
"""A one-block audio tower (never run: BLA has no audio)."""


def build_phi4_multimodal(out: Path, texts: list[str]) -> None:
    """Phi-4-multimodal at its released image sizes (448 px crops of 14 px patches: its processor
    counts the image tokens of that grid), one crop besides the global image."""
    tok = multimodal_tokenizer(
        texts,
        {"image_token": "<|image|>", "audio_token": "<|audio|>"},
        extra_tokens=["<|user|>", "<|assistant|>", "<|end|>"],
    )
    vision = dict(
        TWO_LAYERS,
        image_size=448,
        crop_size=448,
        patch_size=14,
        image_token_id=tok.image_token_id,
    )
    config = tf.Phi4MultimodalConfig(
        **TWO_LAYERS,
        num_key_value_heads=1,
        **lm_config(tok),
        vision_config=vision,
        audio_config=dict(AUDIO, audio_token_id=tok.audio_token_id),
    )
    tf.Phi4MultimodalForCausalLM(config).save_pretrained(out)
    tf.Phi4MultimodalProcessor(
        image_processor=tf.Phi4MultimodalImageProcessor(dynamic_hd=1),
        audio_processor=tf.Phi4MultimodalFeatureExtractor(),
        tokenizer=tok,
        chat_template=PHI_TEMPLATE,
    ).save_pretrained(out)
