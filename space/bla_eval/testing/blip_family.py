"""Random-weight generative BLIP descendants: InstructBLIP (Q-Former with the instruction),
GIT (image tokens before a BERT-vocabulary decoder) and BLIP's captioning head (BLIP-2:
:mod:`.generative`)."""

from __future__ import annotations

from pathlib import Path

import transformers as tf

from .processors import bert_tokenizer, image_processor, lm_config, multimodal_tokenizer
from .sizes import TINY_VISION, TWO_LAYERS


def build_instructblip(out: Path, texts: list[str]) -> None:
    """InstructBLIP: a Q-Former that reads the prompt (BERT tokenizer), 4 query tokens, a Llama
    decoder whose tokenizer splits "yes" and "no" into pieces. The processor adds ``<image>``
    itself (as the real checkpoints' tokenizers have no named image token: with one, the
    processor of transformers 5 fails on ``image_token.content``)."""
    tok = multimodal_tokenizer(texts, style="yes-in-pieces")
    qformer_tok = bert_tokenizer(texts)
    processor = tf.InstructBlipProcessor(
        image_processor=image_processor(),
        tokenizer=tok,
        qformer_tokenizer=qformer_tok,
        num_query_tokens=4,
    )
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=1, **lm_config(tok))
    qformer = dict(TWO_LAYERS, vocab_size=len(qformer_tok) + 8, encoder_hidden_size=32)
    config = tf.InstructBlipConfig(
        vision_config=TINY_VISION,
        qformer_config=qformer,
        text_config=llama.to_dict(),
        num_query_tokens=4,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
    )
    tf.InstructBlipForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)


def build_git(out: Path, texts: list[str]) -> None:
    """GIT: a CLIP tower whose patch features prefix a BERT-vocabulary decoder."""
    tok = bert_tokenizer(texts)
    config = tf.GitConfig(
        vision_config=dict(TINY_VISION, projection_dim=16),
        **TWO_LAYERS,
        vocab_size=len(tok),
        max_position_embeddings=128,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        pad_token_id=tok.pad_token_id,
    )
    tf.GitForCausalLM(config).save_pretrained(out)
    tf.GitProcessor(
        image_processor=tf.CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
    ).save_pretrained(out)


def build_blip_generative(out: Path, texts: list[str]) -> None:
    """BLIP's captioning model (``BlipForConditionalGeneration``): a BERT decoder that
    cross-attends to the image, started by ``[DEC]``."""
    tok = bert_tokenizer(texts)
    tok.add_special_tokens({"bos_token": "[DEC]"})
    text = dict(
        TWO_LAYERS,
        vocab_size=len(tok),
        encoder_hidden_size=32,
        bos_token_id=tok.bos_token_id,
        sep_token_id=tok.sep_token_id,
        pad_token_id=tok.pad_token_id,
    )
    vision = dict(TWO_LAYERS, image_size=32, patch_size=8)
    config = tf.BlipConfig(text_config=text, vision_config=vision, projection_dim=16)
    tf.BlipForConditionalGeneration(config).save_pretrained(out)
    tf.BlipProcessor(image_processor=image_processor(), tokenizer=tok).save_pretrained(out)
