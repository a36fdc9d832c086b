"""The architecture matrix: a tiny random-weight model of each vision-language architecture of
transformers that BLA scores, with its real model and processor classes.

``ARCHITECTURES`` maps a name (the config's ``model_type``, or ``<model_type>-itm`` for an
image-text-matching head) to how its model is built and which kind scores it. The tests score
each one end to end; :func:`build_cached` keeps built models on disk, keyed by the transformers
version and the texts, so a test session builds each once.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import transformers as tf

from .. import tables
from ..tables import Table
from ..user_cache import user_cache
from . import (
    blip_family,
    bridgetower,
    butd,
    deepseek,
    early_fusion,
    flamingo,
    flava,
    fuyu,
    gemma,
    generative,
    glm_mllama,
    grounding,
    idefics,
    llama4,
    llava_family,
    minicpm,
    molmo,
    omni,
    out_of_scope,
    ovis,
    owlvit,
    perception,
    phi,
    processors,
    qwen,
    region_models,
    remote_code,
    sizes,
    video_llava,
    vilt,
)
from . import dual_encoders as dual
from .itm import build_blip2_itm, build_blip_itm


@dataclass(frozen=True)
class Architecture:
    """One row of the matrix: ``build(out, texts)`` saves the model and processor into ``out``
    (its tokenizer trained on ``texts``); ``kind``: the engine kind that scores it (``regions``:
    a detector that ``--regions`` takes, extracting the features region-based models read);
    ``note``: what the row shows (tokenizer style, chat template, ...)."""

    name: str
    kind: str
    build: Callable[[Path, list[str]], None]
    note: str = ""
    path: str = ""
    """The forward path the engine takes (``results.json``'s ``forward_path`` for the generative
    kind; the other kinds encode each image and sentence once)."""
    flags: tuple[str, ...] = ()
    """The ``bla-eval`` options the model needs (``--trust-remote-code``)."""
    upstream_error: str = ""
    """Set where transformers itself cannot run the architecture: the start of the one-line
    error ``bla-eval`` gives for it (the tests check that line, ``docs/models.md`` shows it)."""
    out_of_scope: str = ""
    """Set for a model that no kind scores: a piece of the one line ``bla-eval`` refuses it
    with (checked by the tests, shown in ``docs/models.md``)."""


ARCHITECTURES: dict[str, Architecture] = {}


Builder = Callable[[Path, list[str]], None]


OTHER_PATHS = {
    "contrastive": "features once",
    "itm": "vision tower once per image",
    "regions": "each image once",
}
"""What the non-generative kinds compute once (their only path)."""
PAIR = "whole model per pair"
"""The path of a matching head that reads image and sentence together from its first layer."""


def register(
    name: str,
    kind: str,
    build: Builder,
    note: str = "",
    *,
    path: str = "prefix-cache",
    flags: tuple[str, ...] = (),
    upstream_error: str = "",
    out_of_scope: str = "",
) -> None:
    """Add a row to :data:`ARCHITECTURES` (``path``: the generative kind's forward path, or
    what another kind computes once where it differs from :data:`OTHER_PATHS`)."""
    if path == "prefix-cache":
        path = OTHER_PATHS.get(kind, path)
    ARCHITECTURES[name] = Architecture(
        name, kind, build, note, path, flags, upstream_error, out_of_scope
    )


register("llava", "generative", generative.build_llava_chat, "byte-level BPE, chat template")
register("idefics3", "generative", generative.build_idefics3, "nested images, chat template")
register("qwen2_vl", "generative", generative.build_qwen2_vl, "multimodal RoPE")
register("qwen2_5_vl", "generative", qwen.build_qwen2_5_vl, "multimodal RoPE, windowed vision")
register("qwen3_vl", "generative", qwen.build_qwen3_vl, "DeepStack, interleaved MRoPE")
register("qwen3_5", "generative", qwen.build_qwen3_5, "linear-attention layers")
register("llava_next", "generative", llava_family.build_llava_next, "SentencePiece, any-res")
register("llava_onevision", "generative", llava_family.build_llava_onevision, "any-resolution")
register("vipllava", "generative", llava_family.build_vipllava, "no chat template")
register("mistral3", "generative", llava_family.build_mistral3, "Pixtral tower, SentencePiece")
register("aya_vision", "generative", llava_family.build_aya_vision, "Cohere 2 decoder")
register("internvl", "generative", llava_family.build_internvl, "InternViT, Qwen2 decoder")
register("gemma3", "generative", gemma.build_gemma3, "sliding layers, bidirectional image")
register("paligemma", "generative", gemma.build_paligemma, "prefix-LM, no template", path="plain")
register("lfm2_vl", "generative", gemma.build_lfm2_vl, "NaFlex tower, convolution layers")
register("idefics2", "generative", idefics.build_idefics2, "Perceiver resampler")
register("smolvlm", "generative", idefics.build_smolvlm, "SmolVLM's processor and template")
register("blip-2", "generative", generative.build_blip2_generative, "OPT decoder, no chat template")
register(
    "blip-2-t5",
    "generative",
    generative.build_blip2_t5_generative,
    "Flan-T5 encoder-decoder",
    path="image-features",
)
register(
    "remote-code",
    "generative",
    remote_code.build_remote_code_llava,
    "auto_map, --trust-remote-code",
    flags=("--trust-remote-code",),
)
register(
    "remote-code-causal-lm",
    "generative",
    remote_code.build_remote_code_causal_lm,
    "auto_map AutoModelForCausalLM only",
    flags=("--trust-remote-code",),
)
register(
    "remote-code-base",
    "generative",
    remote_code.build_remote_code_base,
    "auto_map AutoModel only",
    flags=("--trust-remote-code",),
)
# -- more generative families --

register(
    "instructblip",
    "generative",
    blip_family.build_instructblip,
    "Q-Former reads the prompt, yes in pieces",
    path="plain",
)
register("git", "generative", blip_family.build_git, "BERT-vocabulary decoder", path="plain")
register(
    "blip-generative",
    "generative",
    blip_family.build_blip_generative,
    "BLIP captioning head",
    path="plain",
)
register("glm4v", "generative", glm_mllama.build_glm4v, "GLM-4.1V, multimodal RoPE")
register("mllama", "generative", glm_mllama.build_mllama, "tiles, cross-attention", path="plain")
register("chameleon", "generative", early_fusion.build_chameleon, "VQ image tokens", path="plain")
register(
    "kosmos-2", "generative", grounding.build_kosmos2, "latents at fixed positions", path="plain"
)
register("florence2", "generative", grounding.build_florence2, "DaViT tower, BART", path="plain")
register("pix2struct", "generative", grounding.build_pix2struct, "T5-style decoder", path="plain")
register("janus", "generative", deepseek.build_janus, "SigLIP tower, VQ head")
register("deepseek_vl", "generative", deepseek.build_deepseek_vl, "SigLIP, SentencePiece")
register("perception_lm", "generative", perception.build_perception_lm, "timm PE tower")
register("emu3", "generative", early_fusion.build_emu3, "VQ image tokens in rows")
register(
    "llama4",
    "generative",
    llama4.build_llama4,
    "pixel shuffle, mixture of experts",
    upstream_error="'MoeCausalLMOutputWithPast' object has no attribute 'image_outputs'",
)
# -- end of more generative families --
register("ovis2", "generative", ovis.build_ovis2, "visual vocabulary, indicator tokens")
register("molmo2", "generative", molmo.build_molmo2, "attention-pooled crops, column tokens")
register("video_llava", "generative", video_llava.build_video_llava, "pixel_values_images")
register(
    "fuyu",
    "generative",
    fuyu.build_fuyu,
    "linear patch embeddings, answer-start token",
)
register("minicpmv4_6", "generative", minicpm.build_minicpmv4_6, "*args features, linear attention")
register(
    "phi4_multimodal",
    "generative",
    phi.build_phi4_multimodal,
    "causal-LM class, image and audio processors",
    path="plain",
)
register("qwen2_5_omni", "generative", omni.build_qwen2_5_omni, "composite: its thinker loads")
register(
    "instructblipvideo",
    "generative",
    out_of_scope.build_instructblipvideo,
    "Q-Former over video frames",
    path="-",
    out_of_scope="takes no images (video_processor)",
)
register(
    "colpali",
    "none",
    out_of_scope.build_colpali,
    "PaliGemma, one vector per token",
    path="-",
    out_of_scope="late-interaction retrieval model",
)
register(
    "openflamingo",
    "flamingo",
    flamingo.build_openflamingo,
    "GPT-NeoX, gated cross-attention every 2 layers, released checkpoint format",
    path="plain",
)
register(
    "openflamingo-llama",
    "flamingo",
    flamingo.build_openflamingo_llama,
    "LLaMA-style decoder, gated cross-attention every 2 layers",
    path="plain",
)
register("clip", "contrastive", dual.build_clip, "CLIP BPE")
register("siglip", "contrastive", dual.build_siglip, "fixed-length text padding")
register("siglip2", "contrastive", dual.build_siglip2, "NaFlex patches and mask")
register("metaclip_2", "contrastive", dual.build_metaclip_2, "CLIP processor")
register("align", "contrastive", dual.build_align, "EfficientNet tower, BERT")
register("altclip", "contrastive", dual.build_altclip, "XLM-R text tower")
register("chinese_clip", "contrastive", dual.build_chinese_clip, "BERT, token type ids")
register("clipseg", "contrastive", dual.build_clipseg, "CLIPSeg towers")
register("blip", "contrastive", dual.build_blip_contrastive, "BlipModel features")
register("blip-itm", "itm", lambda out, texts: build_blip_itm(out, texts), "BLIP ITM head")
register("blip-2-itm", "itm", build_blip2_itm, "Q-Former ITM head")
register("flava", "contrastive", flava.build_flava, "every token projected: the first read")
register("owlvit", "contrastive", owlvit.build_owlvit, "16 text positions: longer cut, counted")
register("owlv2", "contrastive", owlvit.build_owlv2, "16 text positions, padding processor")
register("vilt-itm", "itm", vilt.build_vilt_itm, "retrieval head, one logit", path=PAIR)
register(
    "bridgetower-itm",
    "itm",
    bridgetower.build_bridgetower_itm,
    "retrieval head, two logits",
    path=PAIR,
)
register(
    "bridgetower-contrastive",
    "itm",
    bridgetower.build_bridgetower_contrastive,
    "its own text and image projections: cosine",
    path=PAIR,
)
register("flava-itm", "itm", flava.build_flava_itm, "pre-training model's ITM head", path=PAIR)
REGIONS = "region features (--regions)"
"""The path of the kinds that read region features, not pixels."""
register(
    "lxmert-itm",
    "region-itm",
    region_models.build_lxmert_itm,
    "LxmertForPreTraining, cross_relationship_score[1]",
    path=REGIONS,
)
register(
    "volta-lxmert",
    "region-itm",
    region_models.build_volta_lxmert,
    "VOLTA ctrl_lxmert files: LxmertModel + VOLTA head, vil_logit[0]",
    path=REGIONS,
)
register(
    "volta-vilbert",
    "region-itm",
    region_models.build_volta_vilbert,
    "VOLTA ctrl_vilbert files: BERT blocks, co-attention, vil_logit[0]",
    path=REGIONS,
)
register(
    "butd",
    "regions",
    butd.build_butd,
    "bottom-up-attention Faster R-CNN (unc-nlp/frcnn-vg-finetuned's layout), 36 regions",
)


def build_cached(name: str, texts: Sequence[str], root: Path | None = None) -> Path:
    """The folder of architecture ``name`` built on ``texts``: built once under ``root``
    (default ``tiny-models/`` of the user cache, ``bla_eval.user_cache``), keyed by the
    transformers version, the texts and the source of the builder's modules; a folder is
    renamed into place only when complete."""
    return build_once(name, ARCHITECTURES[name].build, texts, root)


def build_once(
    name: str,
    build: Callable[[Path, list[str]], Any],
    texts: Sequence[str],
    root: Path | None = None,
) -> Path:
    """The folder ``build(folder, texts)`` fills, seeded, built once under ``root`` as for
    :func:`build_cached` (keyed by ``name``, the transformers version, the texts and the source of
    ``build``'s module and of the shared ``processors`` and ``sizes``). A stable folder also lets
    caches keyed by a model's path, such as vLLM's compiled models, serve later sessions."""
    import torch

    sources = [inspect.getsource(sys.modules[build.__module__])]
    sources += [inspect.getsource(module) for module in (processors, sizes)]
    key = hashlib.sha256(json.dumps([name, list(texts), sources]).encode()).hexdigest()[:16]
    base = root or user_cache()
    folder = base / "tiny-models" / f"transformers-{tf.__version__}" / f"{name}-{key}"
    if _complete(folder):
        return folder
    staging = folder.with_name(f".{folder.name}.building-{os.getpid()}")
    staging.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    build(staging, list(texts))
    try:
        os.replace(staging, folder)
    except OSError:  # another process (a parallel test worker) renamed its build first
        if not _complete(folder):
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _complete(folder: Path) -> bool:
    """Whether ``folder`` holds a finished build (a build is renamed into place when complete)."""
    names = ("config.json", "open_clip_config.json", "config.yaml")
    return any((folder / name).is_file() for name in names)


def markdown_rows() -> list[str]:
    """The matrix as Markdown table rows (``docs/models.md``; the tests check each row against
    what the run of its model gave)."""
    rows = []
    for arch in ARCHITECTURES.values():
        status = "fails upstream" if arch.upstream_error else "scores"
        status = "extracts" if arch.kind == "regions" else status
        status = "out of scope" if arch.out_of_scope else status
        why = arch.upstream_error or arch.out_of_scope
        note = f"{arch.note}; {why}" if why else arch.note
        rows.append([f"`{arch.name}`", arch.kind, arch.path, status, note])
    columns = ("architecture", "kind", "path", "status", "note")
    return tables.markdown(Table("", columns, rows)).split("\n")


def main(argv: list[str] | None = None) -> None:
    """``python -m bla_eval.testing.architectures``: print the matrix as docs/models.md's table."""
    from ..cli_common import OneLineParser

    parser = OneLineParser(
        prog="python -m bla_eval.testing.architectures",
        description="Print the architecture matrix as a Markdown table (docs/models.md).",
    )
    parser.parse_args(argv)
    print("\n".join(markdown_rows()))


if __name__ == "__main__":
    main()
