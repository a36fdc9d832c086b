"""Random-weight Fuyu: image patches projected linearly into a Persimmon decoder, with its real
``FuyuProcessor`` (``FuyuImageProcessor`` and a SentencePiece-style tokenizer).

The processor writes the image as ``|SPEAKER|`` per patch and ``|NEWLINE|`` per row, then
``<s>``, the prompt and ``<0x04>`` (beginning of answer). It encodes the image part on its own and
drops its first token, the ``▁`` a legacy SentencePiece tokenizer puts before every piece of text:
so ``|SPEAKER|`` and ``|NEWLINE|`` are ordinary pieces of the vocabulary, as in the released
tokenizer, and ``▁`` is prepended to each stretch of text between special tokens."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import transformers as tf

from .processors import lm_config
from .sizes import TWO_LAYERS

IMAGE_PIECES = ("|SPEAKER|", "|NEWLINE|")
"""The image placeholder and row end: pieces of the vocabulary, not added tokens."""
SPECIALS = ("<unk>", "<s>", "</s>", "<pad>", "<0x04>")
"""Unknown, BOS, EOS, padding and the beginning-of-answer token the processor appends."""
ANSWERS = ("▁yes", "▁no", "▁Yes", "▁No")
"""The answers, each one piece (as the released tokenizer has them)."""


def fuyu_tokenizer(texts: Iterable[str], vocab_size: int = 1000) -> tf.PreTrainedTokenizerFast:
    """A Unigram tokenizer trained on ``texts`` that splits as Fuyu's released one: ``▁``
    before every stretch of text (``|SPEAKER|`` alone is ``▁``, ``|SPEAKER|``), the image pieces
    and the answers in the vocabulary, :data:`SPECIALS` as special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = list(texts)
    unigram = Tokenizer(models.Unigram())
    unigram.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    unigram.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIALS),
        unk_token="<unk>",
        initial_alphabet=sorted({c for t in texts for c in t if c != " "}),
        show_progress=False,
    )
    unigram.train_from_iterator(texts, trainer)
    state = json.loads(unigram.to_str())
    vocab = state["model"]["vocab"]
    known = {piece for piece, _ in vocab}
    vocab += [[piece, 0.0] for piece in (*IMAGE_PIECES, *ANSWERS) if piece not in known]
    return tf.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(json.dumps(state)),
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        additional_special_tokens=["<0x04>"],
    )


def build_fuyu(out: Path, texts: list[str]) -> None:
    """Fuyu on images fitted into 32 x 32 px, 8 px patches (at most 16 image tokens, one row end
    per patch row), a two-layer Persimmon decoder."""
    tok = fuyu_tokenizer(texts)
    text = dict(TWO_LAYERS, **lm_config(tok), model_type="persimmon", qk_layernorm=True)
    config = tf.FuyuConfig(
        image_size=32,
        patch_size=8,
        text_config=text,
        image_token_id=tok.convert_tokens_to_ids("|SPEAKER|"),
    )
    tf.FuyuForCausalLM(config).save_pretrained(out)
    images = tf.FuyuImageProcessor(
        size={"height": 32, "width": 32}, patch_size={"height": 8, "width": 8}
    )
    tf.FuyuProcessor(image_processor=images, tokenizer=tok).save_pretrained(out)
