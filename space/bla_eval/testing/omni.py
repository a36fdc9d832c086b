"""Random-weight Qwen2.5-Omni as released: a composite checkpoint (``qwen2_5_omni``) whose outer
class has no forward of its own; its generating part is the thinker (image, video and audio
towers, a Qwen2.5 decoder with multimodal RoPE), saved under ``thinker.`` (the speech talker
left out: ``enable_audio_output=False``)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import QWEN_TEMPLATE, lm_config, multimodal_tokenizer
from .qwen import VISION, image_processor, text_sizes

SPECIALS = {
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
    "audio_token": "<|AUDIO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
}
"""The named tokens Qwen2.5-Omni's processor reads from its tokenizer."""
TEMPLATE = QWEN_TEMPLATE.replace(
    "<|vision_start|><|image_pad|><|vision_end|>", "<|vision_bos|><|IMAGE|><|vision_eos|>"
)
AUDIO = dict(
    d_model=32,
    encoder_layers=1,
    encoder_attention_heads=2,
    encoder_ffn_dim=64,
    output_dim=32,
    num_mel_bins=128,
)
"""A one-layer audio tower (never run: BLA has no audio)."""


def build_qwen2_5_omni(out: Path, texts: list[str]) -> None:
    """Qwen2.5-Omni's thinker inside the composite checkpoint, Qwen2-VL's image processor."""
    tok = multimodal_tokenizer(texts, SPECIALS)
    ids = {n: tok.convert_tokens_to_ids(t) for n, t in SPECIALS.items()}
    thinker = dict(
        text_config=text_sizes(**lm_config(tok)),
        vision_config=dict(VISION, out_hidden_size=32, fullatt_block_indexes=[1], window_size=16),
        audio_config=AUDIO,
        image_token_index=ids["image_token"],
        video_token_index=ids["video_token"],
        audio_token_index=ids["audio_token"],
        vision_start_token_id=ids["vision_bos_token"],
        vision_end_token_id=ids["vision_eos_token"],
        audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"],
    )
    config = tf.Qwen2_5OmniConfig(thinker_config=thinker, enable_audio_output=False)
    tf.Qwen2_5OmniForConditionalGeneration(config).save_pretrained(out)
    tf.Qwen2_5OmniProcessor(
        image_processor=image_processor(),
        video_processor=tf.Qwen2VLVideoProcessor(),
        feature_extractor=tf.WhisperFeatureExtractor(feature_size=128),
        tokenizer=tok,
        chat_template=TEMPLATE,
    ).save_pretrained(out)
