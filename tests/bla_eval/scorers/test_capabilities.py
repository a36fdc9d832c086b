"""Kinds and fast paths read from what a model declares: a model that takes images is never the
text kind, a causal-LM class or a composite checkpoint's part loads as generative, the
image-feature call is bound to the processor's outputs by what the method accepts (renamed
inputs, ``*args`` delegation) or refused with the reason, and matching heads are read from
their output. Tiny random-weight models of the real architectures (``bla_eval.testing``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from bla_eval.scorers import LoadOptions, detect_kind, load_scorer, resolve
from bla_eval.scorers.image_features import FeatureBinder, UnboundFeatures, feature_method
from bla_eval.scorers.processor_inputs import model_inputs
from PIL import Image

pytestmark = pytest.mark.usefixtures("one_thread")
TEXTS = ["the woman feeds the man", "the man is fed by the woman", "Is the sentence right?"] * 3


@pytest.fixture(scope="module")
def built(tiny_model) -> dict[str, Path]:
    names = ("phi4_multimodal", "qwen2_5_omni", "video_llava", "minicpmv4_6", "vilt-itm")
    return {name: tiny_model(name, TEXTS) for name in names}


def test_a_causal_lm_class_that_takes_images_is_generative_never_text(built):
    path = str(built["phi4_multimodal"])
    assert detect_kind(path) == "generative"
    with pytest.raises(ValueError, match="of kind 'generative'"):
        resolve(path, "text")


def test_a_composite_checkpoint_loads_its_generating_part(built):
    scorer = load_scorer(str(built["qwen2_5_omni"]), "generative", 2, LoadOptions(device="cpu"))
    assert scorer.model_class == "Qwen2_5OmniThinkerForConditionalGeneration"


def _scorer_and_output(path: Path):
    scorer = load_scorer(str(path), "generative", 2, LoadOptions(device="cpu"))
    image = Image.new("RGB", (40, 30), (90, 120, 150))
    enc = model_inputs(
        scorer.processor,
        scorer.convention,
        [image],
        [scorer.prompt("the woman feeds the man")],
        accepted=None,
        device=scorer.device,
        dtype=scorer.dtype,
    )
    return scorer, enc


def test_a_renamed_image_input_is_bound_through_the_declared_rename(built):
    scorer, enc = _scorer_and_output(built["video_llava"])
    assert "pixel_values_images" in enc and "pixel_values" not in enc
    call = FeatureBinder(scorer.model).bind(enc)
    assert call.inputs == {"pixel_values": "pixel_values_images"}


def test_args_kwargs_delegation_is_read_through_to_the_base_model(built):
    scorer, enc = _scorer_and_output(built["minicpmv4_6"])
    method = feature_method(scorer.model)
    assert method.__self__ is scorer.model.model
    assert FeatureBinder(scorer.model).bind(enc).inputs == {
        "pixel_values": "pixel_values",
        "target_sizes": "target_sizes",
    }


def test_an_unbound_feature_call_says_what_it_needs(built):
    scorer, enc = _scorer_and_output(built["minicpmv4_6"])
    enc.pop("target_sizes")
    with pytest.raises(UnboundFeatures, match="needs 'target_sizes'"):
        FeatureBinder(scorer.model).bind(enc)


def test_a_one_logit_retrieval_head_is_read_as_its_sigmoid(built):
    import torch

    scorer = load_scorer(str(built["vilt-itm"]), "itm", 2, LoadOptions(device="cpu"))
    image = Image.new("RGB", (40, 30), (90, 120, 150))
    got = scorer.pair_scores([image, image], TEXTS[:2])
    enc = scorer.processor(images=[image, image], text=TEXTS[:2], padding=True, return_tensors="pt")
    with torch.inference_mode():
        logits = scorer.model(**enc).logits
    assert logits.shape == (2, 1)
    assert got == pytest.approx(logits[:, 0].sigmoid().tolist(), abs=1e-6)


def test_sentences_past_the_text_towers_length_are_counted_and_announced(tiny_model, capsys):
    """OWL-ViT's 16 text positions: a longer sentence is cut, said once on stderr and counted in
    what results.json records (``protocol.truncated_sentences``)."""
    long = " ".join(["the woman feeds the man"] * 4)
    folder = tiny_model("owlvit", [*TEXTS, long])
    scorer = load_scorer(str(folder), "contrastive", 2, LoadOptions(device="cpu"))
    image = scorer.prepare_image(Image.new("RGB", (40, 30), (90, 120, 150)))
    from bla_eval.scorers import Query

    scorer.score([image], [[Query(TEXTS[0]), Query(long), Query(long)]])
    described = scorer.describe()
    assert described["text_max_length"] == 16 and described["truncated_sentences"] == 1
    assert "longer than the model's 16 text tokens" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "declared"),
    [
        ("owlvit", "OwlViTForObjectDetection"),
        ("owlv2", "Owlv2ForObjectDetection"),
        ("clipseg", "CLIPSegForImageSegmentation"),
    ],
)
def test_a_released_head_class_holding_a_dual_encoder_is_scored_as_one(name, declared, tiny_model):
    """The class the released repos declare (a detector's output holds text and image
    embeddings): detected as the contrastive kind, loaded as its dual encoder, one image's
    sentences scored by cosine."""
    import json

    folder = tiny_model(name, TEXTS)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == [declared]
    assert detect_kind(str(folder)) == "contrastive"
    scorer = load_scorer(str(folder), "contrastive", 2, LoadOptions(device="cpu"))
    image = scorer.prepare_image(Image.new("RGB", (40, 30), (90, 120, 150)))
    from bla_eval.scorers import Query

    scores = scorer.score([image], [[Query(TEXTS[0]), Query(TEXTS[1])]]).scores
    assert len(scores[0]) == 2 and all(-1 <= s <= 1 for s in scores[0])


def test_a_pair_models_contrastive_head_scores_by_its_own_embeddings(tiny_model):
    """BridgeTower's contrastive model: the cosine of its own unit-norm text and image
    embeddings of each pair, not a probability."""
    import torch
    from bla_eval.scorers.registry import scorer_class

    folder = tiny_model("bridgetower-contrastive", TEXTS)
    model = resolve(str(folder))
    assert model.kind == "itm" and not scorer_class("itm").probabilistic_for(model)
    scorer = load_scorer(str(folder), "itm", 2, LoadOptions(device="cpu"))
    image = Image.new("RGB", (40, 30), (90, 120, 150))
    got = scorer.pair_scores([image, image], TEXTS[:2])
    enc = scorer.processor(images=[image, image], text=TEXTS[:2], padding=True, return_tensors="pt")
    with torch.inference_mode():
        out = scorer.model(**enc)
    assert got == pytest.approx((out.text_embeds * out.image_embeds).sum(-1).tolist(), abs=1e-6)


def test_the_renames_a_forward_declares_are_read_from_it():
    """Fuyu's forward takes ``image_patches`` as ``pixel_values`` (transformers'
    ``deprecate_kwarg``), the input its ``get_image_features`` names."""
    import transformers as tf
    from bla_eval.scorers.image_features import renames

    assert renames(tf.FuyuForCausalLM.forward)["pixel_values"] == "image_patches"
    assert renames(tf.VideoLlavaForConditionalGeneration.get_image_features) == {
        "pixel_values": "pixel_values_images"
    }


@pytest.mark.parametrize(("name", "stacks"), [("video_llava", True), ("minicpmv4_6", False)])
def test_images_share_a_vision_batch_only_where_it_gives_their_own_features(built, name, stacks):
    """Video-LLaVA's stacked pixels give each image's features; MiniCPM-V packs patches along
    their last axis, so its images are encoded one at a time (the same features either way)."""
    from bla_eval.scorers.prefix_cache import combine_features, same_features

    scorer = load_scorer(str(built[name]), "generative", 2, LoadOptions(device="cpu"))
    images = [Image.new("RGB", (40, 30), c) for c in ((90, 120, 150), (200, 30, 60))]
    encs = [
        scorer.fast.process(image, scorer.prompt("the woman feeds the man")) for image in images
    ]
    features = scorer.fast._chunk_features(encs)
    assert scorer.fast.stacks is stacks
    alone = combine_features([scorer.fast.image_features([e]) for e in encs])
    assert same_features(features, alone)


OPENED: list[str] | None = None
"""The paths opened while :func:`opened` records (an audit hook, installed once)."""


def _audit(event: str, args: tuple) -> None:
    if OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        OPENED.append(Path(os.fsdecode(args[0])).name)


@contextmanager
def opened() -> Iterator[list[str]]:
    """The names of the files the process opens inside the block (every ``open``: Python's,
    ``io``'s and ``os``'s)."""
    global OPENED
    if not getattr(sys, "_bla_open_audit", False):
        sys.addaudithook(_audit)
        sys._bla_open_audit = True
    OPENED = []
    try:
        yield OPENED
    finally:
        OPENED = None


@pytest.fixture(scope="module")
def text_with_image_processor(tmp_path_factory) -> Path:
    """A tiny Llama text model whose folder also holds an image processor's file: its
    processor declares images, so it is a generative model, never the text kind."""
    import shutil

    from bla_eval.testing.architectures import build_once
    from bla_eval.testing.generative import build_llama_text
    from transformers import CLIPImageProcessor

    root = Path(tmp_path_factory.getbasetemp()).parent / "bla-tiny-models"
    folder = tmp_path_factory.mktemp("capabilities") / "llama"
    shutil.copytree(build_once("llama_text", build_llama_text, TEXTS, root), folder)
    CLIPImageProcessor().save_pretrained(folder)
    return folder


@pytest.mark.parametrize("kind", [None, "text", "vllm"])
def test_detection_reads_the_models_files_once(text_with_image_processor, kind):
    """config.json once by the bounded reader, then once as transformers reads a config, and
    the processor's file once, however many kinds' rules ask (a given kind checked too, and
    what the vllm kind asks of the resolved model)."""
    from bla_eval.scorers.registry import scorer_class
    from transformers import AutoConfig

    path = str(text_with_image_processor)
    scorer_class("vllm")  # every kind's module imported before counting
    with opened() as by_transformers:
        AutoConfig.from_pretrained(path)
    with opened() as files:
        try:
            model = resolve(path, kind)
        except ValueError as err:
            assert kind == "text" and "of kind 'generative'" in str(err)
        else:
            assert model.kind == (kind or "generative")
            scorer_class(model.kind).probabilistic_for(model)
            scorer_class(model.kind).needs_images_for(model)
    assert files.count("config.json") == by_transformers.count("config.json") + 1
    assert files.count("preprocessor_config.json") == 1
