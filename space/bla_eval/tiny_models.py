"""Tiny random-weight models built from real configs, for the tests and the speed scripts.

Each builder saves a model the way a Hub repository holds it (weights, config, processor or
tokenizer) into a folder, so that the engine loads it back by path as it loads a real model. The
architectures and processors are the real ones of ``transformers`` / ``open_clip``; only the sizes
are tiny (``TINY_LAYERS``) and the tokenizers are trained on the texts the model will score, so
every sentence has in-vocabulary tokens. ``save_random_clip`` seeds torch itself; the other
builders draw from torch's generator, so a caller that seeds once (``torch.manual_seed``) and
builds in a fixed order gets the same weights, hence the same scores, every run.

``bla_eval.performance`` uses the full-size shapes (``save_random_clip`` with the default
``CLIPConfig``, ``save_smolvlm_shaped``) to time the engine without downloading a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
import transformers as tf

TINY_LAYERS = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
"""Sizes of a one-layer tiny transformer (text or vision tower)."""
TWO_LAYERS = dict(TINY_LAYERS, num_hidden_layers=2)
"""The same with two layers (the scorer tests: a cache or a cross-attention spans layers)."""
TINY_VISION = dict(TWO_LAYERS, image_size=32, patch_size=8)
"""A two-layer vision tower on 32 px images (16 patches)."""
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""A minimal chat template: the image token where the message has its image."""
QWEN_TEMPLATE = CHAT_TEMPLATE.replace("<image>", "<|vision_start|><|image_pad|><|vision_end|>")
"""The same with Qwen2-VL's image tokens."""
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

SMOLVLM_256M_TEXT = dict(
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    max_position_embeddings=8192,
    rope_theta=100000.0,
    rms_norm_eps=1e-5,
    tie_word_embeddings=True,
)
"""SmolLM2-135M, the language model of SmolVLM-256M."""
SMOLVLM_256M_VISION = dict(
    hidden_size=768,
    intermediate_size=3072,
    num_hidden_layers=12,
    num_attention_heads=12,
    image_size=512,
    patch_size=16,
)
"""SigLIP base patch16-512, the vision tower of SmolVLM-256M."""
SMOLVLM_256M_VOCAB = 49280
SMOLVLM_256M_SCALE = 4
"""Pixel-shuffle factor: (512 / 16)^2 / 4^2 = 64 image tokens per view."""

SMOLVLM_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
"""SmolVLM-Instruct's chat template."""


# Tokenizers and processors


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


def bert_tokenizer(texts: Iterable[str]) -> tf.BertTokenizer:
    """A WordPiece tokenizer whose vocabulary is every (lower-cased) word of ``texts``."""
    words = {w for t in texts for w in t.lower().replace("?", " ? ").replace(":", " : ").split()}
    return word_tokenizer(sorted(words))


def lm_config(tok, **kwargs) -> dict:
    """The token ids and vocabulary size of a language-model config that uses ``tok``."""
    ids = dict(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return dict(vocab_size=len(tok), pad_token_id=tok.pad_token_id, **ids, **kwargs)


def image_processor(cls=tf.BlipImageProcessor):
    """An image processor of class ``cls`` that resizes to 32 x 32."""
    return cls(size={"height": 32, "width": 32})


# Dual encoders


def tiny_clip_config(layers: dict[str, int] = TINY_LAYERS) -> tf.CLIPConfig:
    """A CLIP config with ``layers`` in both towers, 32 px images and a 2000-token vocabulary."""
    return tf.CLIPConfig(
        text_config=dict(layers, vocab_size=2000),
        vision_config=dict(layers, image_size=32, patch_size=8),
        projection_dim=16,
    )


def save_random_clip(out: Path, sentences: Sequence[str], config=None) -> Path:
    """Save a randomly initialised CLIP (default: ViT-B/32 sizes) with processor into ``out``."""
    config = config or tf.CLIPConfig()
    tokenizer = train_clip_tokenizer(sentences, config.text_config.vocab_size)
    config.text_config.bos_token_id = tokenizer.bos_token_id
    config.text_config.eos_token_id = tokenizer.eos_token_id  # pooled at the first EOS
    config.text_config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(0)
    tf.CLIPModel(config).save_pretrained(out)
    size = config.vision_config.image_size
    processor = tf.CLIPImageProcessor(
        size={"shortest_edge": size}, crop_size={"height": size, "width": size}
    )
    tf.CLIPProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(out)
    return out


def build_clip(out: Path, texts: list[str]) -> None:
    """A two-layer CLIP (``save_random_clip`` with ``tiny_clip_config(TWO_LAYERS)``)."""
    save_random_clip(out, texts, tiny_clip_config(TWO_LAYERS))


def build_siglip(out: Path, texts: list[str]) -> None:
    """A two-layer SigLIP with a BPE tokenizer (64 text positions)."""
    tok = bpe_tokenizer(texts)
    text = dict(TWO_LAYERS, vocab_size=len(tok), max_position_embeddings=64)
    config = tf.SiglipConfig(text_config=text, vision_config=TINY_VISION)
    tf.SiglipModel(config).save_pretrained(out)
    processor = image_processor(tf.SiglipImageProcessor)
    tf.SiglipProcessor(image_processor=processor, tokenizer=tok).save_pretrained(out)


def build_open_clip(out: Path, texts: list[str]) -> None:
    """A one-layer open_clip CLIP saved as ``open_clip_config.json`` + safetensors weights
    (open_clip's own tokenizer: ``texts`` are not used)."""
    import open_clip
    from safetensors.torch import save_file

    model_cfg = {
        "embed_dim": 16,
        "vision_cfg": {
            "image_size": 32,
            "layers": 1,
            "width": 32,
            "patch_size": 8,
            "head_width": 16,
        },
        "text_cfg": {
            "context_length": 77,
            "vocab_size": 49408,
            "width": 32,
            "heads": 2,
            "layers": 1,
        },
    }
    out.mkdir(parents=True)
    config = {"model_cfg": model_cfg, "preprocess_cfg": {}}
    (out / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(open_clip.model.CLIP(**model_cfg).state_dict(), out / "open_clip_model.safetensors")


# Image-text matching heads


def build_blip_itm(
    out: Path,
    texts: list[str],
    *,
    layers: dict[str, int] = TWO_LAYERS,
    tokenizer: tf.BertTokenizer | None = None,
) -> None:
    """A BLIP image-text matching model; ``tokenizer`` defaults to ``bert_tokenizer(texts)``."""
    tok = bert_tokenizer(texts) if tokenizer is None else tokenizer
    text = dict(layers, vocab_size=len(tok) + 8, encoder_hidden_size=32)
    vision = dict(layers, image_size=32, patch_size=8)
    config = tf.BlipConfig(text_config=text, vision_config=vision, projection_dim=16)
    tf.BlipForImageTextRetrieval(config).save_pretrained(out)
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


# Generative models


def blip2_processor(texts: list[str]) -> tf.Blip2Processor:
    """A BLIP-2 processor (4 query tokens) around a BPE tokenizer trained on ``texts``."""
    return tf.Blip2Processor(
        image_processor=image_processor(), tokenizer=bpe_tokenizer(texts), num_query_tokens=4
    )


def save_blip2_generative(out: Path, processor: tf.Blip2Processor, lm) -> None:
    """A tiny ``Blip2ForConditionalGeneration`` around the language model config ``lm``."""
    config = tf.Blip2Config(
        vision_config=TINY_VISION,
        qformer_config=dict(TWO_LAYERS, vocab_size=64, encoder_hidden_size=32),
        text_config=lm.to_dict(),
        num_query_tokens=4,
        image_token_index=processor.tokenizer.convert_tokens_to_ids("<image>"),
    )
    tf.Blip2ForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)


def build_blip2_generative(out: Path, texts: list[str], *, max_positions: int = 256) -> None:
    """BLIP-2 with a two-layer OPT decoder of ``max_positions`` positions."""
    processor = blip2_processor(texts)
    opt = tf.OPTConfig(
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        word_embed_proj_dim=32,
        max_position_embeddings=max_positions,
        **lm_config(processor.tokenizer),
    )
    save_blip2_generative(out, processor, opt)


def build_blip2_t5_generative(out: Path, texts: list[str]) -> None:
    """BLIP-2 with an encoder-decoder (T5) language model, as Salesforce/blip2-flan-t5-xl."""
    processor = blip2_processor(texts)
    t5 = tf.T5Config(
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        vocab_size=len(processor.tokenizer),
        pad_token_id=processor.tokenizer.pad_token_id,
        eos_token_id=processor.tokenizer.eos_token_id,
        decoder_start_token_id=processor.tokenizer.pad_token_id,
    )
    save_blip2_generative(out, processor, t5)


def build_llava_chat(out: Path, texts: list[str], *, kv_heads: int = 2) -> None:
    """LLaVA (CLIP vision tower, Llama with ``kv_heads`` key-value heads) with ``CHAT_TEMPLATE``."""
    tok = bpe_tokenizer(texts)
    tok.add_tokens(["<image>"], special_tokens=True)
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=kv_heads, **lm_config(tok))
    config = tf.LlavaConfig(
        vision_config=tf.CLIPVisionConfig(**TINY_VISION, projection_dim=16),
        text_config=llama,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
    )
    tf.LlavaForConditionalGeneration(config).save_pretrained(out)
    tf.LlavaProcessor(
        image_processor=tf.CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=CHAT_TEMPLATE,
        num_additional_image_tokens=1,
    ).save_pretrained(out)


def build_llama_text(out: Path, texts: list[str]) -> None:
    """A text-only Llama (the ``text`` kind) with a BPE tokenizer."""
    tok = bpe_tokenizer(texts)
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=2, **lm_config(tok))
    tf.LlamaForCausalLM(llama).save_pretrained(out)
    tok.save_pretrained(out)


def save_random_idefics3(
    out: Path,
    texts: Sequence[str],
    text: dict[str, Any],
    vision: dict[str, Any],
    *,
    scale_factor: int = 2,
    vocab_size: int | None = None,
    chat_template: str = SMOLVLM_CHAT_TEMPLATE,
) -> Path:
    """Save a random-weight Idefics3 (the SmolVLM architecture) with its processor into ``out``.

    ``text`` / ``vision``: Llama / SigLIP sizes; one view per image (no splitting), so each image
    gives ``(image_size / patch_size)^2 / scale_factor^2`` image tokens.
    """
    tok = bpe_tokenizer(texts)
    specials = ["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
    tok.add_special_tokens({"additional_special_tokens": specials})
    ids = dict(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    text_config = tf.LlamaConfig(
        **text, vocab_size=max(vocab_size or 0, len(tok)), pad_token_id=tok.pad_token_id, **ids
    )
    config = tf.Idefics3Config(
        vision_config=vision,
        text_config=text_config.to_dict(),
        scale_factor=scale_factor,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
    )
    tf.Idefics3ForConditionalGeneration(config).save_pretrained(out)
    size = vision["image_size"]
    processor = tf.Idefics3ImageProcessor(
        size={"longest_edge": size}, max_image_size={"longest_edge": size}, do_image_splitting=False
    )
    seq_len = (size // vision["patch_size"]) ** 2 // scale_factor**2
    tf.Idefics3Processor(
        image_processor=processor, tokenizer=tok, image_seq_len=seq_len, chat_template=chat_template
    ).save_pretrained(out)
    return out


def build_idefics3(out: Path, texts: list[str]) -> None:
    """A two-layer Idefics3 (SmolVLM's architecture) with ``CHAT_TEMPLATE``."""
    text = dict(TWO_LAYERS, num_key_value_heads=1)
    save_random_idefics3(out, texts, text, TINY_VISION, scale_factor=2, chat_template=CHAT_TEMPLATE)


def build_qwen2_vl(out: Path, texts: list[str]) -> None:
    """Qwen2-VL (multimodal RoPE, dynamic-resolution vision tower) with ``QWEN_TEMPLATE``."""
    tok = bpe_tokenizer(texts)
    names = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tok.add_special_tokens({"additional_special_tokens": names})
    ids = dict(
        zip(
            ["vision_start_token_id", "vision_end_token_id", "image_token_id", "video_token_id"],
            tok.convert_tokens_to_ids(names),
            strict=True,
        )
    )
    rope = {"type": "mrope", "mrope_section": [2, 3, 3]}
    text = dict(TWO_LAYERS, num_key_value_heads=2, rope_scaling=rope, **lm_config(tok))
    vision = dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2, patch_size=8)
    config = tf.Qwen2VLConfig(vision_config=vision, text_config=text, **ids)
    tf.Qwen2VLForConditionalGeneration(config).save_pretrained(out)
    tf.Qwen2VLProcessor(
        image_processor=tf.Qwen2VLImageProcessor(
            min_pixels=32 * 32, max_pixels=48 * 48, patch_size=8, merge_size=2
        ),
        tokenizer=tok,
        video_processor=tf.Qwen2VLVideoProcessor(),
        chat_template=QWEN_TEMPLATE,
    ).save_pretrained(out)


def save_smolvlm_shaped(out: Path, sentences: Sequence[str]) -> Path:
    """A random-weight model with SmolVLM-256M's sizes (Idefics3 architecture); its tokenizer is
    trained on ``sentences`` and the chat prompts around them."""
    from jinja2 import Template

    from .prompts import QUESTION
    from .protocols import chat_messages

    template = Template(SMOLVLM_CHAT_TEMPLATE)
    prompts = [
        template.render(messages=chat_messages(s, (), QUESTION), add_generation_prompt=True)
        for s in sentences
    ]
    return save_random_idefics3(
        out,
        [*sentences, *prompts * 4],
        SMOLVLM_256M_TEXT,
        SMOLVLM_256M_VISION,
        scale_factor=SMOLVLM_256M_SCALE,
        vocab_size=SMOLVLM_256M_VOCAB,
    )
