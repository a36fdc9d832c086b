"""Tiny OpenFlamingo models: an open_clip ViT and a GPT-NeoX or LLaMA-style language model
saved as local folders, the resampler and cross-attention blocks drawn at random with their
gates open (so the image changes the scores), saved as upstream's released checkpoints are
(``checkpoint.pt`` + a ``config.json`` of ``create_model_and_transforms``'s arguments)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers as tf

from .processors import bpe_tokenizer

VISION = {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16}
"""The tiny open_clip ViT (its text tower is built and saved too, never used)."""
TEXT = {"context_length": 16, "vocab_size": 100, "width": 16, "heads": 2, "layers": 1}
LM_SIZES = {
    "gpt_neox": dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=2
    ),
    "llama": dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=1,
    ),
}
EVERY = 2
"""Cross-attention before every second decoder layer (as the 4B releases)."""


def save_vision(out: Path) -> None:
    """A tiny open_clip CLIP as a ``local-dir:`` folder."""
    import open_clip
    from safetensors.torch import save_file

    out.mkdir(parents=True)
    cfg = {"embed_dim": 16, "vision_cfg": VISION, "text_cfg": TEXT}
    config = {"model_cfg": cfg, "preprocess_cfg": {}}
    (out / "open_clip_config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(open_clip.model.CLIP(**cfg).state_dict(), out / "open_clip_model.safetensors")


def save_language_model(out: Path, texts: list[str], family: str) -> None:
    """A tiny causal LM of ``family`` with its tokenizer (GPT-NeoX's without a pad token, as
    the GPT-NeoX-20B tokenizer)."""
    tok = bpe_tokenizer(texts)
    if family == "gpt_neox":  # no pad token: upstream adds <PAD>
        tok = tf.PreTrainedTokenizerFast(
            tokenizer_object=tok.backend_tokenizer,
            bos_token="<s>",
            eos_token="</s>",
            unk_token="<unk>",
        )
        config = tf.GPTNeoXConfig(
            vocab_size=len(tok),
            **LM_SIZES[family],
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
        )
        model = tf.GPTNeoXForCausalLM(config)
    else:
        config = tf.LlamaConfig(
            vocab_size=len(tok),
            **LM_SIZES[family],
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        )
        model = tf.LlamaForCausalLM(config)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def config_for(vision: str = "local-dir:vision", lm: str = "lm") -> dict:
    """A folder's ``config.json``: upstream's arguments, paths relative to the folder."""
    return {
        "clip_vision_encoder_path": vision,
        "clip_vision_encoder_pretrained": None,
        "lang_encoder_path": lm,
        "tokenizer_path": lm,
        "cross_attn_every_n_layers": EVERY,
    }


def open_gates(model: torch.nn.Module) -> None:
    """Every tanh gate set to a non-zero draw, so text tokens read the image."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(("attn_gate", "ff_gate")):
                param.uniform_(0.5, 1.0)


def build_openflamingo(out: Path, texts: list[str], family: str = "gpt_neox") -> None:
    """A tiny OpenFlamingo of ``family`` in ``out``: ``vision/``, ``lm/``, ``config.json`` and
    ``checkpoint.pt`` (the resampler, cross-attention and embeddings, as released)."""
    from ..flamingo.build import assemble
    from ..flamingo.checkpoint import released_state
    from ..flamingo.spec import spec_for

    out.mkdir(parents=True, exist_ok=True)
    save_vision(out / "vision")
    save_language_model(out / "lm", texts, family)
    (out / "config.json").write_text(json.dumps(config_for(), indent=2), encoding="utf-8")
    torch.save({}, out / "checkpoint.pt")  # the folder reads as a model while it is built
    model, _, _ = assemble(spec_for(str(out)))
    open_gates(model)
    torch.save(released_state(model), out / "checkpoint.pt")


def build_openflamingo_llama(out: Path, texts: list[str]) -> None:
    """:func:`build_openflamingo` with a LLaMA-style decoder."""
    build_openflamingo(out, texts, "llama")


LM_CONFIGS = {"gpt_neox": tf.GPTNeoXConfig, "mpt": tf.MptConfig}
"""The language models of the releases, by ``releases.yaml``'s ``lm_type`` (MPT-1B's own
``mosaic_gpt`` code names its modules as transformers' MPT does: ``transformer.blocks``,
``transformer.wte``)."""


def released_on_meta(hub_id: str) -> torch.nn.Module:
    """The released model ``hub_id`` at its real sizes on the meta device (no weights): its
    language model from ``releases.yaml``'s sizes, the resampler and cross-attention blocks as
    the project builds them (the vision tower, which no release's checkpoint holds, left out)."""
    from ..flamingo.model import Flamingo
    from ..flamingo.spec import releases

    row = releases()[hub_id]
    width, layers = row["lm_width"], row["lm_layers"]
    if row["lm_type"] == "mpt":
        config = tf.MptConfig(d_model=width, n_layers=layers, n_heads=16, vocab_size=row["tokens"])
    else:
        config = tf.GPTNeoXConfig(
            hidden_size=width,
            num_hidden_layers=layers,
            num_attention_heads=32,
            intermediate_size=4 * width,
            vocab_size=row["tokens"],
        )
    with torch.device("meta"):
        lm = tf.AutoModelForCausalLM.from_config(config)
        return Flamingo(
            torch.nn.Identity(),
            lm,
            eoc_token_id=row["tokens"] - 3,
            media_token_id=row["tokens"] - 2,
            vis_dim=row["vision_width"],
            cross_attn_every_n_layers=row["cross_attn_every_n_layers"],
        )


def released_keys() -> dict[str, dict[str, list[int]]]:
    """Hub id -> the key names and shapes of its released ``checkpoint.pt`` (what upstream's
    training saved: ``bla_eval.flamingo.checkpoint.required_keys`` under upstream's names)."""
    from ..flamingo.checkpoint import KeyMap, required_keys
    from ..flamingo.spec import releases

    found = {}
    for hub_id in releases():
        model = released_on_meta(hub_id)
        keys, own = KeyMap(model), model.state_dict()
        found[hub_id] = {
            keys.to_checkpoint(k): list(own[k].shape) for k in required_keys(model, keys)
        }
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m bla_eval.testing.flamingo``: print :func:`released_keys` as JSON (the tests'
    committed list, ``tests/bla_eval/flamingo/released_keys.json``)."""
    import sys

    from ..cli_common import OneLineParser

    parser = OneLineParser(
        prog="python -m bla_eval.testing.flamingo",
        description="Print the released OpenFlamingo checkpoints' key names and shapes (JSON), "
        "derived from their sizes on the meta device.",
    )
    parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(json.dumps(released_keys(), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
