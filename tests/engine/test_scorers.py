"""Every model kind: tiny real architectures with random weights, saved and loaded back by path,
detected, and run through the CLI on the real dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import transformers as tf
from bla_eval.benchmark import save_random_clip
from bla_eval.benchmark_generative import bpe_tokenizer
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import main
from bla_eval.items import decode_image
from bla_eval.scorers import LoadOptions, Query, detect_kind, load_scorer
from bla_eval.scorers.generative import PROMPT

from bla_metric import formulas

LAYERS = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
VISION = dict(LAYERS, image_size=32, patch_size=8)
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>"
    "{% else %}{{ part['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def bert_tokenizer(texts: list[str]) -> tf.BertTokenizer:
    """A WordPiece tokenizer whose vocabulary is every word of ``texts``."""
    words = {w for t in texts for w in t.lower().replace("?", " ? ").replace(":", " : ").split()}
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return tf.BertTokenizer(vocab={w: i for i, w in enumerate([*specials, *sorted(words)])})


def lm_config(tok, **kwargs) -> dict:
    ids = dict(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return dict(vocab_size=len(tok), pad_token_id=tok.pad_token_id, **ids, **kwargs)


def image_processor(cls=tf.BlipImageProcessor):
    return cls(size={"height": 32, "width": 32})


def build_siglip(out: Path, texts: list[str]) -> None:
    tok = bpe_tokenizer(texts)
    text = dict(LAYERS, vocab_size=len(tok), max_position_embeddings=64)
    tf.SiglipModel(tf.SiglipConfig(text_config=text, vision_config=VISION)).save_pretrained(out)
    processor = image_processor(tf.SiglipImageProcessor)
    tf.SiglipProcessor(image_processor=processor, tokenizer=tok).save_pretrained(out)


def build_open_clip(out: Path, texts: list[str]) -> None:
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


def build_blip_itm(out: Path, texts: list[str]) -> None:
    tok = bert_tokenizer(texts)
    text = dict(LAYERS, vocab_size=len(tok) + 8, encoder_hidden_size=32)
    config = tf.BlipConfig(text_config=text, vision_config=VISION, projection_dim=16)
    tf.BlipForImageTextRetrieval(config).save_pretrained(out)
    tf.BlipProcessor(image_processor=image_processor(), tokenizer=tok).save_pretrained(out)


def build_blip2_itm(out: Path, texts: list[str]) -> None:
    tok = bert_tokenizer(texts)
    qformer = dict(
        LAYERS,
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
        vision_config=VISION,
        qformer_config=qformer,
        text_config=opt.to_dict(),
        num_query_tokens=4,
        image_text_hidden_size=16,
    )
    tf.Blip2ForImageTextRetrieval(config).save_pretrained(out)
    # no image_token_index, so the processor adds no image tokens (a consistent retrieval setup)
    tf.Blip2Processor(image_processor=image_processor(), tokenizer=tok).save_pretrained(out)


def blip2_processor(texts: list[str]) -> tf.Blip2Processor:
    """A BLIP-2 processor (4 query tokens) around a BPE tokenizer trained on ``texts``."""
    return tf.Blip2Processor(
        image_processor=image_processor(), tokenizer=bpe_tokenizer(texts), num_query_tokens=4
    )


def save_blip2_generative(out: Path, processor: tf.Blip2Processor, lm) -> None:
    """A tiny ``Blip2ForConditionalGeneration`` around the language model config ``lm``."""
    config = tf.Blip2Config(
        vision_config=VISION,
        qformer_config=dict(LAYERS, vocab_size=64, encoder_hidden_size=32),
        text_config=lm.to_dict(),
        num_query_tokens=4,
        image_token_index=processor.tokenizer.convert_tokens_to_ids("<image>"),
    )
    tf.Blip2ForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)


def build_blip2_generative(out: Path, texts: list[str]) -> None:
    processor = blip2_processor(texts)
    opt = tf.OPTConfig(
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        word_embed_proj_dim=32,
        max_position_embeddings=256,
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


def build_llava_chat(out: Path, texts: list[str]) -> None:
    tok = bpe_tokenizer(texts)
    tok.add_tokens(["<image>"], special_tokens=True)
    llama = tf.LlamaConfig(**LAYERS, num_key_value_heads=2, **lm_config(tok))
    config = tf.LlavaConfig(
        vision_config=tf.CLIPVisionConfig(**VISION, projection_dim=16),
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
    tok = bpe_tokenizer(texts)
    llama = tf.LlamaConfig(**LAYERS, num_key_value_heads=2, **lm_config(tok))
    tf.LlamaForCausalLM(llama).save_pretrained(out)
    tok.save_pretrained(out)


def build_clip(out: Path, texts: list[str]) -> None:
    config = tf.CLIPConfig(
        text_config=dict(LAYERS, vocab_size=2000), vision_config=VISION, projection_dim=16
    )
    save_random_clip(out, texts, config)


BUILDERS = {
    "clip": (build_clip, "contrastive"),
    "siglip": (build_siglip, "contrastive"),
    "open_clip": (build_open_clip, "open_clip"),
    "blip_itm": (build_blip_itm, "itm"),
    "blip2_itm": (build_blip2_itm, "itm"),
    "blip2_generative": (build_blip2_generative, "generative"),
    "blip2_t5_generative": (build_blip2_t5_generative, "generative"),
    "llava_chat": (build_llava_chat, "generative"),
    "llama_text": (build_llama_text, "text"),
}


def queries(point) -> list[Query]:
    return [Query(c) for c in point.captions]


@pytest.fixture(scope="module")
def texts(built_dataset: Path) -> list[str]:
    points = load_bla(str(built_dataset), limit=60)
    return [c for p in points for c in p.captions] + [PROMPT.format(sentence="x")] * 5


@pytest.fixture(scope="module")
def models(texts, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_models")
    torch.manual_seed(0)
    for name, (build, _) in BUILDERS.items():
        build(root / name, texts)
    return {name: root / name for name in BUILDERS}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_kind_is_detected_from_the_saved_model(models, name):
    assert detect_kind(str(models[name])) == BUILDERS[name][1]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_cli_runs_every_kind_end_to_end(models, name, built_dataset, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--model", str(models[name]), "--output", str(out), "--data", str(built_dataset)]
    assert main([*argv, "--limit", "3", "--batch-size", "4", "--device", "cpu"]) == 0
    assert "| Chance |" in capsys.readouterr().out
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    kind = BUILDERS[name][1]
    assert results["kind"] == kind
    lines = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 9
    for task, metrics in results["tasks"].items():
        rows = [r for r in records if r["task"] == task]
        scores, labels = [r["scores"] for r in rows], [r["labels"] for r in rows]
        assert metrics["ranking"] == formulas.ranking_metrics(scores, labels)
        if kind in ("itm", "generative"):
            assert all(0.0 <= s <= 1.0 for row in scores for s in row)
            predicted = formulas.threshold_labels(scores, 0.5)
        else:
            predicted = formulas.top_k_labels(scores, labels)
        assert metrics["binary"] == formulas.binary_metrics(predicted, labels)
        if kind == "generative":
            assert all(len(r["answers"]) == 4 for r in rows)
            assert "binary_answers" in metrics
    if kind == "generative":
        assert results["protocol"]["chat_template"] is (name == "llava_chat")
        assert results["protocol"]["encoder_decoder"] is (name == "blip2_t5_generative")


def test_itm_scores_equal_the_models_own_forward(models, built_dataset):
    """The vision tower is run once per image and reused: same match probability as forward()."""
    point = load_bla(str(built_dataset), ["ap"], limit=1)[0]
    image = decode_image(point, point.images[0])
    for name in ("blip_itm", "blip2_itm"):
        scorer = load_scorer(str(models[name]), "itm", 8, LoadOptions(device="cpu"))
        ours = scorer.score([scorer.prepare_image(image)], [queries(point)]).scores[0]
        inputs = scorer.processor(
            images=[image] * 4, text=list(point.captions), padding=True, return_tensors="pt"
        )
        flag = "use_image_text_matching_head" if name == "blip2_itm" else "use_itm_head"
        with torch.inference_mode():
            output = scorer.model(**inputs, **{flag: True})
        logits = output.logits_per_image if name == "blip2_itm" else output.itm_score
        assert ours == pytest.approx(logits.softmax(-1)[:, 1].tolist(), abs=1e-5)


def test_open_clip_short_padding_equals_full_context(models, texts):
    scorer = load_scorer(str(models["open_clip"]), None, 8, LoadOptions(device="cpu"))
    assert scorer.trim
    tokens = scorer.tokenizer(texts[:6])
    with torch.inference_mode():
        full = scorer.model.encode_text(tokens)
        short = scorer.encode_trimmed(tokens)
    assert torch.allclose(full, short, atol=1e-5)


def test_generative_scores_are_normalised_yes_probabilities(models, built_dataset):
    point = load_bla(str(built_dataset), ["co"], limit=1)[0]
    scorer = load_scorer(str(models["llava_chat"]), None, 8, LoadOptions(device="cpu"))
    assert "<|assistant|>" in scorer.prompt("the man walks")
    assert PROMPT.format(sentence="the man walks") in scorer.prompt("the man walks")
    image = decode_image(point, point.images[0])
    scored = scorer.score([image], [queries(point)])
    scores = scored.scores[0]
    logits = scorer.next_token_logits([image], [point.captions[0]])
    probs = logits.softmax(-1)[0]
    p_yes, p_no = probs[scorer.yes_ids].sum(), probs[scorer.no_ids].sum()
    assert scores[0] == pytest.approx((p_yes / (p_yes + p_no)).item(), abs=1e-5)
    assert len(scored.answers[0]) == len(point.captions)
    assert all(isinstance(a, str) for a in scored.answers[0])
