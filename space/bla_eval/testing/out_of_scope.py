"""Random-weight models that no kind scores, each refused in one line: InstructBLIP-Video (its
processor takes videos only) and ColPali (late-interaction retrieval: many vectors per image and
query, compared by MaxSim)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .gemma import paligemma_config, paligemma_images, paligemma_tokenizer
from .processors import bert_tokenizer, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS


def build_instructblipvideo(out: Path, texts: list[str]) -> None:
    """InstructBLIP-Video: InstructBLIP's Q-Former over video frames, a video processor only."""
    tok = multimodal_tokenizer(texts, {"video_token": "<video>"})
    qformer_tok = bert_tokenizer(texts)
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    config = tf.InstructBlipVideoConfig(
        vision_config=TINY_VISION,
        qformer_config=dict(TWO_LAYERS, vocab_size=len(qformer_tok) + 8, encoder_hidden_size=32),
        text_config=llama.to_dict(),
        num_query_tokens=4,
        video_token_index=tok.video_token_id,
    )
    tf.InstructBlipVideoForConditionalGeneration(config).save_pretrained(out)
    tf.InstructBlipVideoProcessor(
        video_processor=tf.InstructBlipVideoVideoProcessor(size={"height": 32, "width": 32}),
        tokenizer=tok,
        qformer_tokenizer=qformer_tok,
        num_query_tokens=4,
    ).save_pretrained(out)


def build_colpali(out: Path, texts: list[str]) -> None:
    """ColPali: a PaliGemma whose every output token is a retrieval vector."""
    tok = paligemma_tokenizer(texts)
    config = tf.ColPaliConfig(vlm_config=paligemma_config(tok), embedding_dim=16)
    tf.ColPaliForRetrieval(config).save_pretrained(out)
    tf.ColPaliProcessor(image_processor=paligemma_images(), tokenizer=tok).save_pretrained(out)
