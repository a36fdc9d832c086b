"""Random-weight Video-LLaVA: LanguageBind image and video towers (CLIP-shaped), a Llama decoder,
and a processor that names its image tensor ``pixel_values_images`` (the model's forward and
``get_image_features`` rename it to ``pixel_values``)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .llava_family import CLIP_VISION, llama
from .processors import multimodal_tokenizer

VICUNA_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'user' %}USER: {% else %}ASSISTANT: "
    "{% endif %}{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>\n"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}"
    "{% if message['role'] == 'user' %} {% else %}</s>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
"""Video-LLaVA's Vicuna-style turns (``USER: <image>\\n... ASSISTANT:``)."""


def build_video_llava(out: Path, texts: list[str]) -> None:
    """Video-LLaVA with its image processor (32 px), video processor and Vicuna template."""
    tok = multimodal_tokenizer(
        texts, {"image_token": "<image>", "video_token": "<video>"}, style="sentencepiece"
    )
    config = tf.VideoLlavaConfig(
        vision_config=CLIP_VISION,
        text_config=llama(tok),
        image_token_index=tok.image_token_id,
        video_token_index=tok.video_token_id,
        vision_feature_layer=-1,
        image_seq_length=17,
        video_seq_length=17 * 8,
    )
    tf.VideoLlavaForConditionalGeneration(config).save_pretrained(out)
    tf.VideoLlavaProcessor(
        image_processor=tf.VideoLlavaImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        video_processor=tf.VideoLlavaVideoProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=VICUNA_TEMPLATE,
    ).save_pretrained(out)
