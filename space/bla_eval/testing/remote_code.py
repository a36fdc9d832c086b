"""A model that runs code of its own (``auto_map``): a LLaVA subclass saved with its modules,
as remote-code repositories on the Hub hold them (loaded only with ``--trust-remote-code``)."""

from __future__ import annotations

import json
from pathlib import Path

import transformers as tf

from .generative import build_llava_chat

CONFIG_CODE = """from transformers import LlavaConfig


class TinyRemoteVLConfig(LlavaConfig):
    model_type = "tiny_remote_vl"
"""
MODEL_CODE = """from transformers import LlavaForConditionalGeneration

from .configuration_tiny_remote_vl import TinyRemoteVLConfig


class TinyRemoteVLForConditionalGeneration(LlavaForConditionalGeneration):
    config_class = TinyRemoteVLConfig
"""


def build_remote_code_llava(
    out: Path, texts: list[str], auto_class: str = "AutoModelForImageTextToText"
) -> None:
    """The LLaVA of :func:`.generative.build_llava_chat` as a remote-code model: its config
    and model classes in the folder's own modules, named by ``auto_map`` under
    ``auto_class``, and its weights under the names of the model's own modules (transformers
    renames LLaVA's legacy checkpoint names for its own classes only)."""
    from safetensors.torch import save_file

    build_llava_chat(out, texts)
    state = tf.LlavaForConditionalGeneration.from_pretrained(out).state_dict()
    weights = {name: tensor.contiguous() for name, tensor in state.items()}
    save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
    (out / "configuration_tiny_remote_vl.py").write_text(CONFIG_CODE, encoding="utf-8")
    (out / "modeling_tiny_remote_vl.py").write_text(MODEL_CODE, encoding="utf-8")
    path = out / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(
        model_type="tiny_remote_vl",
        architectures=["TinyRemoteVLForConditionalGeneration"],
        auto_map={
            "AutoConfig": "configuration_tiny_remote_vl.TinyRemoteVLConfig",
            auto_class: "modeling_tiny_remote_vl.TinyRemoteVLForConditionalGeneration",
        },
    )
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def build_remote_code_causal_lm(out: Path, texts: list[str]) -> None:
    """The remote-code model with its class named under ``AutoModelForCausalLM`` only, as
    Phi-3-vision, MiniCPM-V 2.x, Qwen-VL-Chat and CogVLM2 name theirs."""
    build_remote_code_llava(out, texts, "AutoModelForCausalLM")


def build_remote_code_base(out: Path, texts: list[str]) -> None:
    """The remote-code model with its class named under ``AutoModel`` only, as InternVL's
    original repositories and Ovis name theirs."""
    build_remote_code_llava(out, texts, "AutoModel")
