"""The generative fast path equals the plain per-pair path (float32, within 1e-4).

Tiny real architectures with random weights (BLIP-2 OPT, BLIP-2 Flan-T5, LLaVA, Idefics3 = the
SmolVLM architecture, Qwen2-VL with multimodal RoPE), saved with ``save_pretrained`` and loaded back
by path; real BLA images and sentences; prompts with and without in-context demonstrations (as
plain text and as chat turns); sentences of different lengths in uneven batches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import transformers as tf
from bla_eval.protocols import get_template
from bla_eval.scorers.prefix_cache import (
    IMAGE_FEATURES,
    PLAIN,
    PREFIX_CACHE,
    PrefixCachedForward,
    UnsupportedPrefix,
    appended_specials,
    fast_path_for,
    mismatch,
)
from bla_eval.testing.generative import (
    build_blip2_generative,
    build_blip2_t5_generative,
    build_idefics3,
    build_llava_chat,
    build_qwen2_vl,
)
from bla_eval.testing.itm import build_blip_itm
from bla_eval.testing.processors import CHAT_TEMPLATE, bert_tokenizer, word_tokenizer
from bla_eval.testing.sizes import TINY_VISION, TWO_LAYERS
from PIL import Image

TEMPLATE = get_template()
BUILDERS = {
    "blip2_opt": lambda out, texts: build_blip2_generative(out, texts, max_positions=512),
    "blip2_t5": build_blip2_t5_generative,
    "llava": lambda out, texts: build_llava_chat(out, texts, kv_heads=1),
    "idefics3": build_idefics3,
    "qwen2_vl": build_qwen2_vl,
}
NESTED = {"idefics3"}
EXPECTED_PATH = {"blip2_t5": IMAGE_FEATURES}


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: tiny models on a shared 2-core machine run several times faster."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def material(release_dir: Path) -> list[tuple[Image.Image, list[str]]]:
    """Two real images, each with the sentences of its datapoint plus two shorter active-passive
    sentences (so the sentences of one image differ in length)."""

    def first_row(name: str) -> tuple[int, list[str]]:
        rows = json.loads((release_dir / "annotations" / f"{name}_captions.json").read_text())
        group = rows[0]["caption_group"][0]
        keys = [k for k in ("True1", "True2", "False1", "False2") if k in group]
        return rows[0]["image_id"], [group[k] for k in keys]

    _, short = first_row("active_passive")
    out = []
    for name in ("coordination", "relative_clause"):
        image_id, sentences = first_row(name)
        with Image.open(release_dir / "images" / f"{image_id}.jpg") as image:
            out.append((image.convert("RGB").resize((40, 30)), sentences + short[:2]))
    return out


@pytest.fixture(scope="module")
def models(material, tiny_model) -> dict[str, Path]:
    texts = [s for _, sentences in material for s in sentences] + [TEMPLATE.question] * 5
    return {name: tiny_model(name, texts, build) for name, build in BUILDERS.items()}


def load(path: Path):
    processor = tf.AutoProcessor.from_pretrained(path)
    processor.tokenizer.padding_side = "left"
    config = tf.AutoConfig.from_pretrained(path)
    cls = getattr(tf, config.architectures[0])
    return cls.from_pretrained(path, dtype=torch.float32).eval(), processor


def prompts_for(processor, sentences, demonstrations):
    chat = bool(getattr(processor, "chat_template", None))
    if not chat:
        return [TEMPLATE.plain(s, demonstrations) for s in sentences]
    return [
        processor.apply_chat_template(TEMPLATE.chat(s, demonstrations), add_generation_prompt=True)
        for s in sentences
    ]


@torch.inference_mode()
def plain_logits(model, processor, image, prompt, nested, start):
    """The plain path for one pair: the processor's inputs through the model's own forward."""
    inputs = processor(images=[[image]] if nested else [image], text=[prompt], return_tensors="pt")
    if start is not None:
        inputs["decoder_input_ids"] = torch.full((1, 1), start)
    return model(**inputs).logits[0, -1].float()


def decoder_start(model) -> int | None:
    text = model.config.text_config
    return text.decoder_start_token_id if text.is_encoder_decoder else None


@pytest.mark.parametrize("name", list(BUILDERS))
def test_fast_path_equals_plain_path(models, material, name):
    model, processor = load(models[name])
    start = decoder_start(model)
    chosen = fast_path_for(model, encoder_decoder=start is not None)
    assert chosen.path == EXPECTED_PATH.get(name, PREFIX_CACHE)
    fast = PrefixCachedForward(
        model,
        processor,
        path=chosen.path,
        device=torch.device("cpu"),
        dtype=torch.float32,
        decoder_start=start or 0,
        batch_size=3,
    )
    for image, sentences in material:
        # zero-shot, and two demonstration sets (as the SD protocol gives: per target group)
        sets = [(), ((sentences[1], "yes"), (sentences[3], "no"))]
        sets.append(((sentences[0], "yes"), (sentences[2], "no")))
        prompts, keys = [], []
        for demos in sets:
            prompts += prompts_for(processor, sentences, demos)
            keys += [demos] * len(sentences)
        lengths = {len(processor.tokenizer(p)["input_ids"]) for p in prompts}
        assert len(lengths) > 2  # suffixes of different lengths share batches
        got = fast.logits(image, prompts, keys)
        want = torch.stack(
            [plain_logits(model, processor, image, p, name in NESTED, start) for p in prompts]
        )
        assert got.shape == want.shape
        assert torch.allclose(got, want, atol=1e-4, rtol=0), (got - want).abs().max()
        # one prompt alone, and a group without keys
        single = fast.logits(image, prompts[:1])
        assert torch.allclose(single, want[:1], atol=1e-4, rtol=0)
    assert fast.stats["images"] == 4
    if chosen.path == PREFIX_CACHE:
        assert fast.stats["prefix_tokens"] > 0


def test_image_after_the_shared_prefix_is_refused(models, material):
    """A prompt whose image tokens follow the sentence cannot share a cache: the check says so."""
    model, processor = load(models["llava"])
    image, sentences = material[0]
    template = CHAT_TEMPLATE.replace(
        "{% if part['type'] == 'image' %}<image>{% else %}{{ part['text'] }}{% endif %}",
        "{% if part['type'] == 'text' %}{{ part['text'] }}<image>{% endif %}",
    )
    prompts = [
        processor.apply_chat_template(TEMPLATE.chat(s), chat_template=template) for s in sentences
    ]
    fast = PrefixCachedForward(
        model, processor, path=PREFIX_CACHE, device=torch.device("cpu"), dtype=torch.float32
    )
    with pytest.raises(UnsupportedPrefix):
        fast.logits(image, prompts)


def test_special_tokens_the_processor_adds_after_the_prompt_end_every_row():
    """Special tokens after the tokenizer's ids of the prompt (Fuyu's beginning of answer) are
    what each cached row ends with; any other token there is not."""
    tok = word_tokenizer(["a", "b"])  # [SEP] is 3, "a" 5, "b" 6
    assert appended_specials(tok, [9, 5, 6, 3], [5, 6]) == [3]
    assert appended_specials(tok, [9, 5, 6], [5, 6]) == []
    assert appended_specials(tok, [9, 5, 6, 6], [5, 6]) is None


def test_a_sentences_own_trailing_unknown_tokens_are_scored_as_its_tokens():
    """A BERT vocabulary lacks the sentence's last characters: their ``[UNK]`` is the
    sentence's (counted), the ``[SEP]`` the tokenizer's post-processor appends is not; the
    same in a decoder's targets and in a decoder-only row."""
    from types import SimpleNamespace

    from bla_eval.scorers.caption import sentence_spans
    from bla_eval.scorers.decoder_targets import decoder_targets

    tok = bert_tokenizer(["the man feeds the woman", "is it right"])
    texts = ["the man feeds the woman", "the man feeds the woman \u2603 \u2603"]
    own = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    assert own == [5, 7] and tok.convert_ids_to_tokens(tok(texts[1])["input_ids"])[-3:] == [
        "[UNK]",
        "[UNK]",
        "[SEP]",
    ]
    targets = decoder_targets(tok, tok.cls_token_id, "", texts)
    assert [(span.count, span.tail) for span in targets.spans] == [(5, 1), (7, 1)]
    spans = sentence_spans(SimpleNamespace(tokenizer=tok), "", "is it right? ", texts)
    assert [(span.count, span.tail) for span in spans] == [(5, 1), (7, 1)]


def test_tokens_the_processor_adds_after_the_prompt_are_the_reason():
    """Processor ids that end with more than the tokenizer's (tokens after every prompt that
    are not special) are named as such; any other difference keeps the general reason."""
    assert mismatch([7, 1, 2, 3, 9], [2, 3]) == "the processor adds 1 token(s) after the prompt"
    assert mismatch([7, 1, 2, 3, 9, 9], [2, 3]).startswith("the processor adds 2 token(s)")
    assert (
        mismatch([7, 1, 2, 4], [2, 3])
        == "the prompts' shared prefix does not match the processor's"
    )


def test_paligemma_runs_the_plain_path():
    """PaliGemma's prefix attends to the whole prompt (prefix-LM): no cache, and a reason."""
    gemma = dict(TWO_LAYERS, num_key_value_heads=1, head_dim=16, vocab_size=300)
    vision = dict(TINY_VISION, projection_dim=32)
    config = tf.PaliGemmaConfig(text_config=gemma, vision_config=vision, image_token_index=299)
    chosen = fast_path_for(tf.PaliGemmaForConditionalGeneration(config), encoder_decoder=False)
    assert chosen.path == PLAIN
    assert "prefix-LM" in chosen.reason


class FeaturesInKwargs(tf.Blip2ForConditionalGeneration):
    """BLIP-2 whose forward declares no ``mm_encoder_outputs`` and takes any keyword (as
    transformers 5.3's does, which then reads ``pixel_values`` and nothing else)."""

    def forward(self, pixel_values, input_ids, attention_mask=None, **kwargs):
        return super().forward(pixel_values, input_ids, attention_mask, **kwargs)


@pytest.mark.parametrize("name", ["blip2_t5", "blip2_opt"])
def test_a_forward_that_does_not_declare_image_features_runs_the_plain_path(models, name):
    model, _ = load(models[name])
    start = decoder_start(model)
    chosen = fast_path_for(FeaturesInKwargs(model.config), encoder_decoder=start is not None)
    assert chosen.path == PLAIN
    assert "takes no precomputed image features" in chosen.reason


@pytest.mark.parametrize("name", list(BUILDERS))
def test_scorer_fast_path_equals_its_plain_path(models, material, name):
    """The generative scorer, loaded by path: same scores and answers on either path, zero-shot
    and with demonstrations, and the protocol record names the path."""
    from bla_eval.scorers import LoadOptions, Query, load_scorer

    scorer = load_scorer(str(models[name]), "generative", 3, LoadOptions(device="cpu"))
    assert scorer.describe()["forward_path"] == EXPECTED_PATH.get(name, PREFIX_CACHE)
    images = [image for image, _ in material]
    demos = ((material[0][1][1], "yes"), (material[0][1][3], "no"))
    queries = [
        [Query(s) for s in sentences] + [Query(s, demos) for s in sentences[:3]]
        for _, sentences in material
    ]
    zero_shot = [[q for q in group if not q.demonstrations] for group in queries]
    zero_shot.append([])  # an image without queries
    fast = scorer.score(images, queries)  # per image: a cache per demonstration set
    fast_zero = scorer.score([*images, images[0]], zero_shot)  # images batched
    scorer.path, scorer.batch_size = PLAIN, 1
    plain = scorer.score(images, queries)
    for got, want in zip(fast.scores, plain.scores, strict=True):
        assert got == pytest.approx(want, abs=1e-4)
    assert fast.answers == plain.answers
    for got, want, group in zip(fast_zero.scores, plain.scores, zero_shot, strict=False):
        assert got == pytest.approx(want[: len(group)], abs=1e-4)
    assert fast_zero.scores[-1] == []
    assert scorer.describe()["forward_path"] == PLAIN


def test_performance_script_times_both_paths_in_one_run(models, built_dataset, capsys):
    """``python -m bla_eval.performance.generative`` on a tiny model: both paths agree."""
    from bla_eval.performance.generative import main

    argv = ["--data", str(built_dataset), "--images", "3"]
    main([*argv, "--model", str(models["idefics3"]), "--threads", "1"])
    out = capsys.readouterr().out
    assert "fast path (prefix-cache):" in out and "plain per-pair path:" in out
    difference = float(out.split("max |score difference| ")[1].split()[0])
    assert difference < 1e-4


def test_each_second_counts_in_one_part(models, material):
    """A part timed inside another (the image features inside the prefix) is not counted again
    in the outer one: the parts of a scoring add up to no more than its wall time."""
    import time

    from bla_eval.scorers import LoadOptions, load_scorer

    scorer = load_scorer(str(models["llava"]), "generative", 4, LoadOptions(device="cpu"))
    fast = scorer.fast
    with fast.timed("outer"):
        time.sleep(0.05)
        with fast.timed("inner"):
            time.sleep(0.2)
    assert fast.seconds["inner"] >= 0.2 and fast.seconds["outer"] < 0.2, fast.seconds
    fast.seconds.clear()
    start = time.perf_counter()
    prompts = [[scorer.prompt(s) for s in sentences] for _, sentences in material]
    fast.logits_many([image for image, _ in material], prompts)
    wall = time.perf_counter() - start
    assert {"prefix", "image_features", "suffixes"} <= set(fast.seconds)
    assert sum(fast.seconds.values()) <= wall, (fast.seconds, wall)


def test_itm_runs_the_vision_tower_once_per_image(material, tiny_model):
    """BLIP ITM: one vision-tower row per distinct image, however many sentences it has."""
    from bla_eval.scorers import LoadOptions, Query, load_scorer

    words = {w for _, sentences in material for s in sentences for w in s.split()}
    model = tiny_model(
        "blip_itm-words",
        sorted(words),
        lambda folder, words: build_blip_itm(folder, [], tokenizer=word_tokenizer(words)),
    )
    scorer = load_scorer(str(model), "itm", 4, LoadOptions(device="cpu"))
    seen = []
    hook = scorer.model.vision_model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["pixel_values"].shape[0]), with_kwargs=True
    )
    images = [scorer.prepare_image(image) for image, _ in material]
    queries = [[Query(s) for s in sentences] for _, sentences in material]
    scored = scorer.score(images, queries)
    hook.remove()
    assert sum(seen) == len(images) == 2
    assert [len(row) for row in scored.scores] == [len(q) for q in queries]


def test_device_map_auto_places_the_model_and_scores_the_same(models, material):
    """``--device-map auto`` (accelerate places the layers; here all on the CPU): same scores."""
    from bla_eval.cli import build_parser, config_from_args
    from bla_eval.scorers import LoadOptions, Query, load_scorer

    args = build_parser().parse_args(["--model", "m", "--output", "o", "--device-map", "auto"])
    assert config_from_args(args).device_map == "auto"
    image, sentences = material[0]
    queries = [[Query(s) for s in sentences[:3]]]
    plain = load_scorer(str(models["llava"]), "generative", 4, LoadOptions(device="cpu"))
    mapped = load_scorer(
        str(models["llava"]), "generative", 4, LoadOptions(device="cpu", device_map="auto")
    )
    assert mapped.describe()["device_map"] == "auto"
    assert str(mapped.device) == "cpu"
    got, want = mapped.score([image], queries), plain.score([image], queries)
    assert got.scores[0] == pytest.approx(want.scores[0], abs=1e-5)
