"""Random-weight PerceptionLM: a timm Perception Encoder tower (``timm_wrapper``), a projector
with 2 x 2 pooling and a Llama decoder."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, lm_config, multimodal_tokenizer
from .sizes import TWO_LAYERS

PE_TOWER = dict(embed_dim=32, depth=2, num_heads=2, img_size=32, patch_size=8)
"""timm's ``vit_pe_core_tiny_patch16_384`` cut to two blocks on 32 px images, 8 px patches."""


def build_perception_lm(out: Path, texts: list[str]) -> None:
    """PerceptionLM (one 32 px tile, 16 patches pooled to 4 image tokens)."""
    tok = multimodal_tokenizer(texts, {"image_token": "<|image|>", "video_token": "<|video|>"})
    vision = tf.TimmWrapperConfig(
        architecture="vit_pe_core_tiny_patch16_384", model_args=PE_TOWER, do_pooling=False
    )
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    config = tf.PerceptionLMConfig(
        vision_config=vision,
        text_config=llama,
        vision_use_cls_token=True,
        projector_pooling_ratio=2,
        image_token_id=tok.image_token_id,
        video_token_id=tok.video_token_id,
    )
    tf.PerceptionLMForConditionalGeneration(config).save_pretrained(out)
    images = tf.PerceptionLMImageProcessor(
        tile_size=32, max_num_tiles=1, vision_input_type="vanilla", size={"height": 32, "width": 32}
    )
    tf.PerceptionLMProcessor(
        video_processor=tf.PerceptionLMVideoProcessor(),
        image_processor=images,
        tokenizer=tok,
        patch_size=8,
        pooling_ratio=2,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<|image|>"),
    ).save_pretrained(out)
