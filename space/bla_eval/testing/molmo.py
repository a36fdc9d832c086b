"""A random-weight Molmo2: a ViT whose features of two layers are pooled by attention over
2 x 2 patches, image crops framed by start, column and end tokens, a Qwen3-style decoder."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import CHAT_TEMPLATE, multimodal_tokenizer

IMAGE_TOKENS = [
    "<im_patch>",
    "<im_col>",
    "<im_start>",
    "<low_res_im_start>",
    "<frame_start>",
    "<im_end>",
    "<frame_end>",
    "<im_low>",
    "<|video|>",
]
"""The tokens Molmo2's processor frames image crops and video frames with."""
CONFIG_IDS = {
    "image_start_token_id": "<im_start>",
    "low_res_image_start_token_id": "<low_res_im_start>",
    "image_end_token_id": "<im_end>",
    "image_patch_id": "<im_patch>",
    "frame_start_token_id": "<frame_start>",
    "frame_end_token_id": "<frame_end>",
}
"""The config's token ids, by the token each names."""
HEADS = dict(num_attention_heads=2, num_key_value_heads=2, head_dim=16)


def build_molmo2(out: Path, texts: list[str]) -> None:
    """Molmo2 on 48 px crops of 8 px patches (one crop and the low-resolution view)."""
    tok = multimodal_tokenizer(texts, {"image_token": "<|image|>"}, extra_tokens=IMAGE_TOKENS)
    ids = {key: tok.convert_tokens_to_ids(token) for key, token in CONFIG_IDS.items()}
    sizes = dict(hidden_size=32, intermediate_size=64, **HEADS)
    vision = dict(
        sizes, num_hidden_layers=2, image_size=[48, 48], patch_size=8, num_position_embeddings=36
    )
    adapter = dict(sizes, vision_feature_layer=[-1, -2], text_hidden_size=32)
    text = dict(
        sizes,
        num_hidden_layers=2,
        num_key_value_heads=1,
        vocab_size=len(tok),
        additional_vocab_size=0,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    config = tf.Molmo2Config(vision_config=vision, adapter_config=adapter, text_config=text, **ids)
    tf.Molmo2ForConditionalGeneration(config).save_pretrained(out)
    images = tf.Molmo2ImageProcessor(
        size={"height": 48, "width": 48},
        patch_size=8,
        pooling_size=[2, 2],
        max_crops=1,
        overlap_margins=[1, 1],
    )
    tf.Molmo2Processor(
        image_processor=images,
        video_processor=tf.Molmo2VideoProcessor(),
        tokenizer=tok,
        chat_template=CHAT_TEMPLATE.replace("<image>", "<|image|>"),
    ).save_pretrained(out)
