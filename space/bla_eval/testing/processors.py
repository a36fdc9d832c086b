"""Tokenizers trained on the texts a tiny model scores, image processors and chat templates."""

from __future__ import annotations

import json
from collections.abc import Iterable

import transformers as tf

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""A minimal chat template: the image token where the message has its image."""
IMAGES_FIRST_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>{% endif %}"
    "{% endfor %}{% for part in message['content'] %}{% if part['type'] == 'text' %}"
    "{{ part['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""The images of a turn before its text whatever the order of its parts, as llava-hf's
LLaVA-1.5 templates render them."""
QWEN_TEMPLATE = CHAT_TEMPLATE.replace("<image>", "<|vision_start|><|image_pad|><|vision_end|>")
"""The same with Qwen2-VL's image tokens."""
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_clip_tokenizer(sentences: Iterable[str], vocab_size: int = 49408):
    """A CLIP tokenizer (BPE, ``</w>`` word ends) trained on ``sentences`` with ``tokenizers``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    special = ["<|startoftext|>", "<|endoftext|>"]
    bpe = Tokenizer(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    bpe.normalizer = normalizers.Lowercase()
    bpe.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        end_of_word_suffix="</w>",
        show_progress=False,
    )
    bpe.train_from_iterator(sentences, trainer)
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ") if isinstance(m, str) else m) for m in state["merges"]]
    # The trainer numbers the word-final letters ("s</w>") in hash order, different in every
    # call: number the tokens in sorted order so that the same sentences give the same ids, and
    # a seeded model the same scores, in every process.
    tokens = [*special, *sorted(set(state["vocab"]) - set(special))]
    return tf.CLIPTokenizer(vocab={t: i for i, t in enumerate(tokens)}, merges=merges)


def bpe_tokenizer(texts: Iterable[str], vocab_size: int = 1000) -> tf.PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts``, with 'yes' / 'no' as single tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<unk>", "<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([*texts, *["yes no Yes No"] * 50], trainer)
    return tf.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
    )


def word_tokenizer(words: Iterable[str]) -> tf.BertTokenizer:
    """A WordPiece tokenizer whose vocabulary is BERT's specials then ``words`` in their order."""
    return tf.BertTokenizer(vocab={w: i for i, w in enumerate([*BERT_SPECIALS, *words])})


def bert_ids(tok: tf.BertTokenizer) -> dict:
    """The special-token ids of a BERT-style text config (BLIP's) that uses ``tok``: ``[CLS]``
    as its beginning, ``[SEP]``, ``[PAD]``."""
    return dict(
        bos_token_id=tok.cls_token_id, sep_token_id=tok.sep_token_id, pad_token_id=tok.pad_token_id
    )


def bert_tokenizer(texts: Iterable[str]) -> tf.BertTokenizer:
    """A WordPiece tokenizer whose vocabulary is every (lower-cased) word of ``texts``."""
    words = {w for t in texts for w in t.lower().replace("?", " ? ").replace(":", " : ").split()}
    return word_tokenizer(sorted(words))


def token_ids(tok) -> dict:
    """The special-token ids of a text config that uses ``tok``: a config class's defaults are
    its released vocabulary's (CLIP's 49406, BLIP's 30522), outside a tiny one, and transformers
    warns about every config that keeps them."""
    return dict(
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id
    )


CLIP_TOKEN_IDS = dict(bos_token_id=0, eos_token_id=1, pad_token_id=1)
"""The ids of ``train_clip_tokenizer``'s ``<|startoftext|>`` and ``<|endoftext|>`` (its pad
token), numbered first whatever the sentences."""


def lm_config(tok, **kwargs) -> dict:
    """The token ids and vocabulary size of a language-model config that uses ``tok``."""
    ids = token_ids(tok)
    pad = ids.pop("pad_token_id")
    return dict(vocab_size=len(tok), pad_token_id=pad, **ids, **kwargs)


def image_processor(cls=tf.BlipImageProcessor):
    """An image processor of class ``cls`` that resizes to 32 x 32."""
    return cls(size={"height": 32, "width": 32})


TOKENIZER_STYLES = ("byte-level", "sentencepiece", "yes-in-pieces")
"""How a tiny tokenizer splits words, as real ones do: byte-level BPE (``Ġyes``, Llama 3,
Qwen), SentencePiece-style BPE (``▁yes``, Gemma, Llama 2, Mistral), or byte-level BPE in which
"yes" and "no" are never one token (the answer's first piece carries it)."""


def multimodal_tokenizer(
    texts: Iterable[str],
    specials: dict[str, str] | None = None,
    *,
    style: str = "byte-level",
    extra_tokens: Iterable[str] = (),
    vocab_size: int = 1000,
) -> tf.PreTrainedTokenizerFast:
    """A BPE tokenizer trained on ``texts`` in ``style`` (:data:`TOKENIZER_STYLES`), with the
    model's named special tokens ``specials`` (e.g. ``{"image_token": "<image>"}``: then
    ``tokenizer.image_token`` and ``tokenizer.image_token_id`` exist, as processors read them)
    and ``extra_tokens`` added as special tokens without a name."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if style not in TOKENIZER_STYLES:
        raise ValueError(f"unknown tokenizer style {style!r}: use one of {TOKENIZER_STYLES}")
    base = ["<unk>", "<s>", "</s>", "<pad>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    if style == "sentencepiece":
        bpe.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        bpe.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
        alphabet = sorted({c for t in texts for c in t.replace(" ", "▁")} | set("yesnoYESNO▁"))
    else:
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        bpe.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    answers = [] if style == "yes-in-pieces" else ["yes no Yes No"] * 50
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=base, initial_alphabet=alphabet, show_progress=False
    )
    bpe.train_from_iterator([*texts, *answers], trainer)
    if style == "yes-in-pieces":
        bpe = _without_answer_words(bpe)
    named = dict(specials or {})
    extra = [t for t in extra_tokens if t not in named.values()]
    tok = tf.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        extra_special_tokens=named,
    )
    if extra:
        tok.add_special_tokens({"additional_special_tokens": extra})
    return tok


def _without_answer_words(bpe):
    """``bpe`` without the tokens (and merges) that spell a whole "yes" or "no"."""
    from tokenizers import Tokenizer

    state = json.loads(bpe.to_str())
    model = state["model"]

    def whole(token: str) -> bool:
        return token.lstrip("Ġ").lower() in ("yes", "no")

    kept = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]) if not whole(t)]
    model["vocab"] = {t: i for i, t in enumerate(kept)}
    merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
    model["merges"] = [
        m for m in merges if not whole("".join(m)) and all(p in model["vocab"] for p in m)
    ]
    for added in state.get("added_tokens", []):
        added["id"] = model["vocab"][added["content"]]
    return Tokenizer.from_str(json.dumps(state))
