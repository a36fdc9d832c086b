"""``--score caption`` and ``caption-pmi``: the sentence's likelihood after the image and its
correction for the language prior (``bla_eval.scorers.caption``, ``bla_metric.likelihood``).

Tiny real architectures (the architecture matrix's LLaVA, Qwen2-VL, Idefics3, BLIP-2 OPT) on real
BLA images and sentences: the prefix cache gives the plain path's log-probabilities (float32,
within 1e-4), which equal an independent ``log_softmax`` over the model's own logits; a model
trained so that its prior favours the false sentences ranks them first by likelihood and last by
PMI; alpha is chosen on the learning split.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from bla_eval.cli import main as bla_eval
from bla_eval.items import decode_image
from bla_eval.protocols import get_template
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.scorers.prefix_cache import PLAIN, PREFIX_CACHE

from bla_metric.likelihood import choose_alpha, pmi_rows, reversal_rate
from tests.bla_eval.commands import call, eval_args, refused

pytestmark = pytest.mark.usefixtures("one_thread")
FAMILIES = ("llava", "qwen2_vl", "idefics3", "blip-2")


@pytest.fixture(scope="module")
def ap_points(built_dataset: Path) -> list:
    from bla_eval.benchmarks.bla import load_bla

    return [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:2]


@pytest.fixture(scope="module")
def models(ap_points, tiny_model) -> dict[str, Path]:
    """The matrix's models, built on the texts ``test_architectures`` builds them on."""
    texts = [c for p in ap_points for c in p.captions] + [get_template().question] * 5
    return {name: tiny_model(name, texts) for name in FAMILIES}


def material(ap_points) -> tuple[list, list[list[Query]]]:
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in ap_points]
    return images, [[Query(c) for c in p.captions] for p in ap_points]


@pytest.mark.parametrize("mode", ["caption", "caption-pmi"])
@pytest.mark.parametrize("name", FAMILIES)
def test_prefix_cache_equals_plain_path(name, mode, models, ap_points):
    scorer = load_scorer(
        str(models[name]), "generative", 3, LoadOptions(device="cpu", score=mode, pmi_alpha=1.0)
    )
    images, queries = material(ap_points)
    fast = scorer.score(images, queries)
    record = scorer.describe()
    assert record["score"] == mode
    if name != "blip-2":  # no chat template and no BOS: the sentence starts right at the image
        assert record["forward_path"] == PREFIX_CACHE, record["forward_path_reason"]
    scorer.caption_path = PLAIN
    plain = scorer.score(images, queries)
    for got, want in zip(fast.scores, plain.scores, strict=True):
        assert got == pytest.approx(want, abs=1e-4)
    for row in fast.terms:
        for cell in row:
            assert cell["log_p_image"] < 0 and cell["tokens"] >= 5
            if mode == "caption-pmi":
                assert cell["pmi_alpha"] == 1.0 and cell["log_p_prior"] < 0


@torch.inference_mode()
def test_log_probabilities_equal_an_independent_log_softmax(models, ap_points):
    """Sum of log_softmax over the model's own logits at the sentence's tokens (counted with the
    tokenizer alone): same numbers, so higher is more likely and the ranking follows."""
    from bla_eval.scorers.caption import head_of

    scorer = load_scorer(
        str(models["llava"]), "generative", 4, LoadOptions(device="cpu", score="caption")
    )
    images, queries = material(ap_points)
    scored = scorer.score(images, queries)
    head = head_of(scorer, [q.sentence for group in queries for q in group], image=True)
    for image, group, row in zip(images, queries, scored.scores, strict=True):
        for query, value in zip(group, row, strict=True):
            inputs = scorer.processor(
                images=[[image]], text=[head + query.sentence], return_tensors="pt"
            )
            log_probs = torch.log_softmax(scorer.model(**inputs).logits[0].float(), -1)
            ids = inputs["input_ids"][0]
            n = len(scorer.tokenizer(head + query.sentence)["input_ids"]) - len(
                scorer.tokenizer(head)["input_ids"]
            )
            want = sum(float(log_probs[k - 1, ids[k]]) for k in range(len(ids) - n, len(ids)))
            assert value == pytest.approx(want, abs=1e-4)
        order = sorted(range(len(row)), key=lambda j: -row[j])
        assert [row[j] for j in order] == sorted(row, reverse=True)


STRING_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}USER: {% for part in m['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% else %}{{ part['text'] }}{% endif %}{% endfor %}"
    " {% else %}ASSISTANT: {{ m['content'] }}</s>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
"""LLaVA-1.5's layout: the user's parts, and the assistant's content read as a string."""


@pytest.mark.parametrize("template", ["parts", "string"])
def test_the_sentence_is_the_templates_assistant_message(template, models, ap_points):
    """The prompt before the sentence is the template's rendering of the assistant's message up
    to the sentence, whether the template reads the content as parts (the matrix's LLaVA) or as
    a string (LLaVA-1.5's layout, whose space after ``ASSISTANT:`` starts the sentence)."""
    from bla_eval.scorers.caption import head_of

    scorer = load_scorer(
        str(models["llava"]), "generative", 4, LoadOptions(device="cpu", score="caption")
    )
    sentences = list(ap_points[0].captions)
    if template == "string":
        scorer.processor.chat_template = STRING_TEMPLATE
        want = "USER: <image>Describe the image in one sentence. ASSISTANT: "
    else:
        want = "<|user|><image>Describe the image in one sentence.<|assistant|>"
    assert head_of(scorer, sentences, image=True) == want
    assert head_of(scorer, sentences, image=False) == want.replace("<image>", "")


def prior_biased_model(out: Path, true: list[str], false: list[str], image) -> None:
    """A tiny LLaVA trained (60 Adam steps) so that its language prior favours ``false``: the
    false sentences without the image, and, more weakly, both with the image, the true ones
    from the image."""
    from bla_eval.scorers import caption
    from bla_eval.testing.generative import build_llava_chat

    torch.manual_seed(0)
    build_llava_chat(out, [*true, *false, *[get_template().question] * 3])
    options = LoadOptions(device="cpu", score="caption-pmi", pmi_alpha=1.0)
    scorer = load_scorer(str(out), "generative", 4, options)
    with_image, without = caption.heads(scorer, [*true, *false])
    model = scorer.model.train()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss(texts: list[str], shown: bool) -> torch.Tensor:
        if shown:
            enc = scorer.processor(
                images=[[image]] * len(texts),
                text=[with_image + t for t in texts],
                padding=True,
                return_tensors="pt",
            )
        else:
            enc = scorer.tokenizer([without + t for t in texts], padding=True, return_tensors="pt")
        labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
        return model(**enc, labels=labels).loss

    for _ in range(60):
        optimiser.zero_grad()
        (loss(false, False) + 0.3 * loss(true, True) + 0.3 * loss(false, True)).backward()
        optimiser.step()
    model.save_pretrained(out)


def test_pmi_reverses_a_prior_that_favours_the_false_sentences(ap_points, tmp_path):
    point = ap_points[0]
    image = decode_image(point, point.images[0]).resize((40, 30))
    true = [c for c, label in zip(point.captions, point.labels[0], strict=True) if label]
    false = [c for c, label in zip(point.captions, point.labels[0], strict=True) if not label]
    prior_biased_model(tmp_path, true, false, image)
    queries = [[Query(c) for c in point.captions]]
    labels = [list(point.labels[0])]
    likelihood = load_scorer(
        str(tmp_path), "generative", 4, LoadOptions(device="cpu", score="caption")
    )
    by_likelihood = likelihood.score([image], queries).scores[0]
    options = LoadOptions(device="cpu", score="caption-pmi", pmi_alpha=1.0)
    corrected = load_scorer(str(tmp_path), "generative", 4, options).score([image], queries)
    by_pmi = corrected.scores[0]

    def top_two(scores):
        return {point.captions[j] for j in sorted(range(4), key=lambda j: -scores[j])[:2]}

    assert top_two(by_likelihood) == set(false)
    assert top_two(by_pmi) == set(true)
    cond = [[c["log_p_image"] for c in corrected.terms[0]]]
    prior = [[c["log_p_prior"] for c in corrected.terms[0]]]
    assert pmi_rows(cond, prior, 1.0) == [by_pmi]
    assert reversal_rate(cond, prior, 1.0, labels) == 1.0
    assert choose_alpha(cond, prior, labels)[1] == 1.0


def test_choose_alpha_takes_the_smallest_best_alpha():
    cond = [[-10.0, -11.0, -9.0, -9.5]]  # the likelihood prefers the false sentences
    prior = [[-12.0, -13.0, -8.0, -8.5]]  # because the prior does
    alpha, accuracy = choose_alpha(cond, prior, [[1, 1, 0, 0]])
    assert accuracy == 1.0 and 0 < alpha <= 1.0
    assert choose_alpha(cond, prior, [[1, 1, 0, 0]], grid=[alpha - 0.1, alpha])[0] == alpha


def test_a_run_chooses_alpha_on_the_learning_split(models, built_dataset, tmp_path, capsys):
    out = tmp_path / "run"
    argv = eval_args(models["llava"], built_dataset, out, "--tasks", "ap", "--limit", 2)
    code, err = call(bla_eval, [*argv, "--score", "caption-pmi"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    record = results["protocol"]
    assert record["score"] == "caption-pmi"
    assert "active_passive_learning/validation" in record["pmi_alpha_source"]
    assert not record["binary_view"].startswith("threshold")
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    for row in rows:
        assert row["pmi_alpha"] == [record["pmi_alpha"]] * 4
        terms = zip(row["scores"], row["log_p_image"], row["log_p_prior"], strict=True)
        for score, cond, prior in terms:
            assert math.isclose(score, cond - record["pmi_alpha"] * prior, abs_tol=1e-9)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--score", "caption", "clip"], "has no sentence likelihood"),
        (["--pmi-alpha", "0.5"], "--pmi-alpha is the weight of --score caption-pmi"),
        (["--score", "caption", "--protocol", "icl-sd"], "scored zero-shot"),
        (["--score", "caption", "--prompt", "blip2"], "asks no question"),
        (["--score", "likelihood"], "likelihood"),
    ],
)
def test_score_options_are_checked(
    extra, fragment, models, tiny_clip, built_dataset, tmp_path, capsys
):
    model = tiny_clip if "clip" in extra else models["llava"]
    extra = [a for a in extra if a != "clip"]
    argv = eval_args(model, built_dataset, tmp_path / "run", "--limit", 1, *extra)
    refused(bla_eval, argv, capsys, fragment)
    assert not (tmp_path / "run").exists()


def test_cost_script_times_the_three_scores(models, built_dataset, capsys):
    from bla_eval.performance.scores import main

    main(["--data", str(built_dataset), "--model", str(models["llava"]), "--images", "2"])
    out = capsys.readouterr().out
    for mode in ("yes-no", "caption", "caption-pmi"):
        assert f"{mode}: " in out and "x yes-no" in out


def test_compare_ranks_the_three_questions_and_robustness_reports_the_prior(
    models, built_dataset, tmp_path, capsys
):
    runs = []
    for score in ("yes-no", "caption", "caption-pmi"):
        out = tmp_path / score
        argv = eval_args(models["llava"], built_dataset, out, "--tasks", "ap", "--limit", 3)
        extra = ["--score", score] + (["--pmi-alpha", "1"] if score == "caption-pmi" else [])
        assert call(bla_eval, [*argv, *extra], capsys)[0] == 0
        runs.append(str(out))
    capsys.readouterr()
    assert bla_eval(["compare", *runs, "--resamples", "200"]) == 0
    shown = capsys.readouterr().out
    for label in ("(caption)", "(caption-pmi)"):
        assert label in shown, shown
    assert bla_eval(["robustness", *runs]) == 0
    shown = capsys.readouterr().out
    assert "Prior correction of" in shown and "| AP | 3 |" in shown, shown


def test_the_space_asks_the_question_chosen(models, built_dataset, tmp_path):
    from bla_space import views
    from bla_space.config import SpaceConfig
    from bla_space.evaluate_tab import score_choices
    from bla_space.runner import EvaluationRequest, run_evaluation

    assert [value for _, value in score_choices()] == ["yes-no", "caption", "caption-pmi"]
    config = SpaceConfig(dataset=str(built_dataset), results_dir=tmp_path / "runs", device="cpu")
    request = EvaluationRequest(str(models["llava"]), "generative", ["ap"], 2, score="caption")
    run = run_evaluation(config, request)
    assert run.results["protocol"]["score"] == "caption"
    assert views.protocol_label(run.results) == "zero-shot, caption, top-k"
