"""Every model kind: tiny real architectures with random weights, saved and loaded back by path,
detected, and run through the CLI on the real dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import main
from bla_eval.items import decode_image
from bla_eval.protocols.templates import get_template
from bla_eval.scorers import LoadOptions, Query, detect_kind, load_scorer
from bla_eval.testing.dual_encoders import build_clip, build_open_clip, build_siglip
from bla_eval.testing.generative import (
    build_blip2_generative,
    build_blip2_t5_generative,
    build_llama_text,
    build_llava_chat,
)
from bla_eval.testing.itm import build_blip2_itm, build_blip_itm

from bla_metric import formulas

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
    return [c for p in points for c in p.captions] + [
        get_template().question.format(sentence="x")
    ] * 5


@pytest.fixture(scope="module")
def models(texts, tiny_model) -> dict[str, Path]:
    return {name: tiny_model(name, texts, build) for name, (build, _) in BUILDERS.items()}


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
    assert get_template().question.format(sentence="the man walks") in scorer.prompt(
        "the man walks"
    )
    image = decode_image(point, point.images[0])
    scored = scorer.score([image], [queries(point)])
    scores = scored.scores[0]
    logits = scorer.next_token_logits([image], [point.captions[0]])
    probs = logits.softmax(-1)[0]
    p_yes, p_no = probs[scorer.yes_ids].sum(), probs[scorer.no_ids].sum()
    assert scores[0] == pytest.approx((p_yes / (p_yes + p_no)).item(), abs=1e-5)
    assert len(scored.answers[0]) == len(point.captions)
    assert all(isinstance(a, str) for a in scored.answers[0])


@pytest.mark.slow
def test_text_kind_scores_are_the_same_under_any_hash_seed(built_dataset, tiny_model, tmp_path):
    """The text kind batches its sentences in one order whatever the set order: processes with
    different hash seeds write the same bytes (same thread count: one each). A tokenizer of the
    whole release's words makes equal-length sentences pad differently, so the order shows."""
    texts = [c for p in load_bla(str(built_dataset)) for c in p.captions]
    model = tiny_model("llama_text", texts, build_llama_text)
    procs = {}
    for seed in ("1", "2", "3"):  # at once: one thread each, so they do not share one
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "OMP_NUM_THREADS": "1"}
        argv = ["--model", str(model), "--data", str(built_dataset), "--output", str(out)]
        procs[out] = subprocess.Popen(
            [sys.executable, "-m", "bla_eval", *argv, "--limit", "10", "--device", "cpu"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    outputs = []
    for out, proc in procs.items():
        err = proc.communicate(timeout=600)[1]
        assert proc.returncode == 0, err[-2000:]
        outputs.append((out / "scores.jsonl").read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
