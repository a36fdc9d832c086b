"""Random-weight decoders: BLIP-2 (OPT, T5), LLaVA (also one that vLLM serves), Idefics3
(SmolVLM), Qwen2-VL and text-only Llamas (also one that vLLM serves)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import transformers as tf

from ..protocols.templates import get_template
from .processors import CHAT_TEMPLATE, QWEN_TEMPLATE, bpe_tokenizer, image_processor, lm_config
from .sizes import TINY_VISION, TWO_LAYERS

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


LLAVA_INIT = 0.2
"""The standard deviation of the tiny LLaVA's language-model and projector weights. With
transformers' 0.02 a model of 32 dimensions attends almost uniformly: it scores a bag of words
(a sentence and its word-order swap tie to four decimals), the image barely moves it, and BLA's
rankings follow the sentences' lengths alone. With 0.2 the words' order and the image change
the scores, and yes / no probabilities stay away from 0 and 1."""


def build_llava_chat(
    out: Path, texts: list[str], *, kv_heads: int = 2, chat_template: str = CHAT_TEMPLATE
) -> None:
    """LLaVA (CLIP vision tower, Llama with ``kv_heads`` key-value heads) with ``chat_template``
    (default ``CHAT_TEMPLATE``)."""
    tok = llava_tokenizer(texts)
    llama = tf.LlamaConfig(
        **TWO_LAYERS, num_key_value_heads=kv_heads, initializer_range=LLAVA_INIT, **lm_config(tok)
    )
    tf.LlavaForConditionalGeneration(llava_config(tok, llama, TINY_VISION)).save_pretrained(out)
    save_llava_processor(out, tok, chat_template)


def llava_tokenizer(texts: list[str]) -> Any:
    """A BPE tokenizer of ``texts`` with LLaVA's ``<image>`` token."""
    tok = bpe_tokenizer(texts)
    tok.add_tokens(["<image>"], special_tokens=True)
    return tok


def llava_config(tok: Any, llama: Any, vision: dict[str, Any]) -> Any:
    """The LLaVA config of a Llama text model and a CLIP vision tower of ``vision`` settings."""
    return tf.LlavaConfig(
        vision_config=tf.CLIPVisionConfig(**vision, projection_dim=16),
        text_config=llama,
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
    )


def save_llava_processor(out: Path, tok: Any, chat_template: str) -> None:
    """LLaVA's processor for 32 px images in 8 px patches, saved beside the model."""
    tf.LlavaProcessor(
        image_processor=tf.CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tok,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=chat_template,
        num_additional_image_tokens=1,
    ).save_pretrained(out)


def build_blind_llava(out: Path, texts: list[str]) -> None:
    """The LLaVA of :func:`build_llava_chat` made blind: its projector's last layer has zero
    weights and a fixed bias, so every image is embedded as the same constant vectors and the
    model cannot see what an image shows (the image-versus-prior controls' null model)."""
    import torch

    build_llava_chat(out, texts)
    model = tf.LlavaForConditionalGeneration.from_pretrained(out)
    last = model.model.multi_modal_projector.linear_2
    with torch.no_grad():
        last.weight.zero_()
        last.bias.copy_(torch.linspace(-1.0, 1.0, last.bias.numel()))
    model.save_pretrained(out)


LLAVA_HEAD_64_TEXT = dict(
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
)
"""A two-layer Llama with attention heads of 64 dimensions: vLLM's CPU attention takes head
sizes 32, 64, 80, ... 256 (not the 16 of ``TWO_LAYERS``)."""
LLAVA_HEAD_64_VISION = dict(TINY_VISION, hidden_size=64, intermediate_size=128)
"""A two-layer CLIP tower, hidden size 64, on 32 px images with 8 px patches (16 patches)."""
PAPER_NEW_TOKENS = 5
"""The saved generation config's ``max_new_tokens``: ``generate()`` with the model's defaults
(the authors' protocols) writes this many tokens at most, in transformers and in vLLM alike."""


def build_llava_vllm(out: Path, texts: list[str]) -> None:
    """LLaVA that vLLM and transformers both load: head size 64, and the checkpoint in the
    llava-hf layout (``vision_tower.vision_model.*``).

    transformers 5 saves the CLIP tower of a LLaVA as ``vision_tower.*`` (it drops the
    ``vision_model.`` prefix of ``CLIPVisionModel`` on load and does not put it back on save);
    vLLM's CLIP loader reads ``vision_tower.vision_model.*``, the layout of the published LLaVA
    checkpoints, which transformers loads too. So the saved tensors are renamed to that layout.
    """
    from safetensors.torch import load_file, save_file

    tok = llava_tokenizer(texts)
    llama = tf.LlamaConfig(**LLAVA_HEAD_64_TEXT, **lm_config(tok))
    model = tf.LlavaForConditionalGeneration(llava_config(tok, llama, LLAVA_HEAD_64_VISION))
    model.generation_config.max_new_tokens = PAPER_NEW_TOKENS
    model.save_pretrained(out)
    weights = out / "model.safetensors"
    tower = "vision_tower."
    tensors = {
        (f"{tower}vision_model.{k[len(tower) :]}" if k.startswith(tower) else k): v
        for k, v in load_file(weights).items()
    }
    save_file(tensors, weights, metadata={"format": "pt"})
    save_llava_processor(out, tok, CHAT_TEMPLATE)


def build_llama_text(out: Path, texts: list[str]) -> None:
    """A text-only Llama (the ``text`` kind) with a BPE tokenizer."""
    tok = bpe_tokenizer(texts)
    llama = tf.LlamaConfig(**TWO_LAYERS, num_key_value_heads=2, **lm_config(tok))
    tf.LlamaForCausalLM(llama).save_pretrained(out)
    tok.save_pretrained(out)


def build_llama_vllm(out: Path, texts: list[str]) -> None:
    """A text-only Llama that vLLM and transformers both load: the language model of
    :func:`build_llava_vllm` (attention heads of 64 dimensions), with a BPE tokenizer."""
    tok = bpe_tokenizer(texts)
    tf.LlamaForCausalLM(tf.LlamaConfig(**LLAVA_HEAD_64_TEXT, **lm_config(tok))).save_pretrained(out)
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

    template = Template(SMOLVLM_CHAT_TEMPLATE)
    prompts = [
        template.render(messages=get_template().chat(s), add_generation_prompt=True)
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
