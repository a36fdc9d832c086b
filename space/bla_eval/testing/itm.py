"""Random-weight image-text matching heads: BLIP and BLIP-2 (Q-Former with text input)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import bert_ids, bert_tokenizer, image_processor
from .sizes import TINY_VISION, TWO_LAYERS


def build_blip_itm(
    out: Path,
    texts: list[str],
    *,
    layers: dict[str, int] = TWO_LAYERS,
    tokenizer: tf.BertTokenizer | None = None,
    model_class: type = tf.BlipForImageTextRetrieval,
) -> None:
    """A BLIP image-text matching model (or another head of ``model_class``: ``BlipModel``'s
    features); ``tokenizer`` defaults to ``bert_tokenizer(texts)``."""
    tok = bert_tokenizer(texts) if tokenizer is None else tokenizer
    text = dict(layers, vocab_size=len(tok) + 8, encoder_hidden_size=32, **bert_ids(tok))
    vision = dict(layers, image_size=32, patch_size=8)
    config = tf.BlipConfig(text_config=text, vision_config=vision, projection_dim=16)
    model_class(config).save_pretrained(out)
    tf.BlipProcessor(image_processor=image_processor(), tokenizer=tok).save_pretrained(out)


def build_blip2_itm(out: Path, texts: list[str]) -> None:
    """A BLIP-2 image-text matching model (Q-Former with text input, 4 query tokens)."""
    tok = bert_tokenizer(texts)
    qformer = dict(
        TWO_LAYERS,
        vocab_size=len(tok) + 8,
        encoder_hidden_size=32,
        max_position_embeddings=64,
        use_qformer_text_input=True,
    )
    opt = tf.OPTConfig(
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        vocab_size=64,
        word_embed_proj_dim=32,
    )
    config = tf.Blip2Config(
        vision_config=TINY_VISION,
        qformer_config=qformer,
        text_config=opt.to_dict(),
        num_query_tokens=4,
        image_text_hidden_size=16,
    )
    tf.Blip2ForImageTextRetrieval(config).save_pretrained(out)
    # no image_token_index, so the processor adds no image tokens (a consistent retrieval setup)
    tf.Blip2Processor(image_processor=image_processor(), tokenizer=tok).save_pretrained(out)
