"""--protocol paper | paper-icl-sd | paper-icl-dd: the authors' prompt strings, demonstration
choice and generated answers, with a tiny random BLIP-2 (Flan-T5) and a tiny LLaVA (chat)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import main as bla_eval
from bla_eval.items import decode_image
from bla_eval.protocols import get_protocol, get_template
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.testing.generative import build_blip2_t5_generative, build_llava_chat
from bla_eval.testing.processors import CHAT_TEMPLATE

from bla_metric.answers import ANSWER_SCORES, parse_answer

TARGET = "the man feeds the woman"
AUTHORS = get_template("authors")
PAPER_SD, PAPER_DD = get_protocol("paper-icl-sd"), get_protocol("paper-icl-dd")


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def learning_items(built_dataset: Path) -> dict[str, list]:
    configs = ("active_passive_learning", "coordination_learning", "relative_clause_learning")
    return {c: load_bla(str(built_dataset), (c,)) for c in configs}


@pytest.fixture(scope="module")
def models(built_dataset: Path, tiny_model) -> dict[str, Path]:
    items = load_bla(str(built_dataset), limit=20)
    texts = [c for i in items for c in i.captions] + [AUTHORS.ask("x")] * 5
    return {
        "blip2_t5": tiny_model("blip2_t5", texts, build_blip2_t5_generative),
        "llava": tiny_model("llava_chat", texts, build_llava_chat),
    }


# ----------------------------------------------------------------------------- prompt strings


def test_zero_shot_prompt_is_the_authors_string_with_its_trailing_space():
    assert AUTHORS.plain(TARGET) == (
        "Question: Is the sentence the man feeds the woman appropriate for this image? "
        "yes or no? Answer: "
    )


def test_in_context_prompt_drops_yes_or_no_and_answers_with_a_full_stop():
    demos = (("the woman feeds the man", "yes"), ("the man is fed by the woman", "no"))
    assert AUTHORS.plain(TARGET, demos) == (
        "Question: Is the sentence the woman feeds the man appropriate for this image? "
        "Answer: yes. "
        "Question: Is the sentence the man is fed by the woman appropriate for this image? "
        "Answer: no. "
        "Question: Is the sentence the man feeds the woman appropriate for this image? Answer: "
    )


def test_blip2_t5_scorer_sends_the_authors_strings(models):
    options = LoadOptions(device="cpu", protocol="paper")
    scorer = load_scorer(str(models["blip2_t5"]), "generative", None, options)
    assert scorer.paper and not scorer.chat and scorer.encoder_decoder
    assert scorer.prompt(Query(TARGET)) == AUTHORS.plain(TARGET)
    demos = (("a", "no"), ("b", "yes"))
    assert scorer.prompt(Query(TARGET, demos)) == (
        "Question: Is the sentence a appropriate for this image? Answer: no. "
        "Question: Is the sentence b appropriate for this image? Answer: yes. "
        "Question: Is the sentence the man feeds the woman appropriate for this image? Answer: "
    )


def test_llava_chat_scorer_puts_the_authors_strings_in_turns(models):
    assert "<|{{ message['role'] }}|>" in CHAT_TEMPLATE
    options = LoadOptions(device="cpu", protocol="paper-icl-sd")
    scorer = load_scorer(str(models["llava"]), "generative", None, options)
    assert scorer.chat
    # the template's trim_blocks drops the newline after each turn
    assert scorer.prompt(Query(TARGET)) == (
        "<|user|><image>Question: Is the sentence the man feeds the woman appropriate for this "
        "image? yes or no? Answer: <|assistant|>"
    )
    assert scorer.prompt(Query(TARGET, (("a", "yes"), ("b", "no")))) == (
        "<|user|><image>Question: Is the sentence a appropriate for this image? Answer: "
        "<|assistant|>yes."
        "<|user|>Question: Is the sentence b appropriate for this image? Answer: "
        "<|assistant|>no."
        "<|user|>Question: Is the sentence the man feeds the woman appropriate for this image? "
        "Answer: <|assistant|>"
    )


# ----------------------------------------------------------------------------- demonstrations


def authors_prompt(captions: dict[str, str], i: int, target: str, coin: float) -> str:
    """The authors' script (test_blip2_bla.py), its ``random.random()`` replaced by ``coin``."""
    template = "Question: {} Answer: {}"
    question = "Is the sentence {} appropriate for this image?"
    true, false = (
        (captions["True1"], captions["False1"])
        if i % 2 == 0
        else (captions["True2"], captions["False2"])
    )
    if coin > 0.5:
        context = [(question.format(true), "yes."), (question.format(false), "no.")]
    else:
        context = [(question.format(false), "no."), (question.format(true), "yes.")]
    context.append((question.format(target), ""))
    return " ".join(template.format(q, a) for q, a in context)


def release_dict(item) -> dict[str, str]:
    return dict(zip(("True1", "True2", "False1", "False2"), item.captions, strict=True))


def test_sd_demonstrations_are_the_authors_target_included(learning_items):
    seed = 11
    items = [i for config in learning_items.values() for i in config]
    plan = PAPER_SD.plan(items, seed=seed)
    flips = []
    for item in items:
        demos = plan.demonstrations[(item.task, item.id)]
        for i, target in enumerate(item.captions):
            coin = random.Random(f"{seed}:{item.id}:{i}").random()
            flips.append(coin > 0.5)
            expected = authors_prompt(release_dict(item), i, target, coin)
            assert AUTHORS.plain(target, demos[i]) == expected
            assert target in [s for s, _ in demos[i]]  # the target is its own demonstration
    assert 0.4 < sum(flips) / len(flips) < 0.6  # both orders occur


def test_sd_coin_flips_follow_the_seed(learning_items):
    items = learning_items["coordination_learning"][:20]
    a, b = (PAPER_SD.plan(items, seed=s).demonstrations for s in (0, 1))
    assert a == PAPER_SD.plan(items, seed=0).demonstrations
    assert a != b


def test_dd_demonstrations_come_from_the_other_task_of_the_same_image(
    learning_items, built_dataset
):
    items = learning_items["relative_clause_learning"]
    partners = load_bla(str(built_dataset), ("coordination",))
    plan = PAPER_DD.plan(items, {"relative_clause_learning": partners}, seed=3)
    by_image = {p.images[0].key: p for p in partners}
    skipped = plan.without_partner.get("relative_clause_learning", [])
    assert len(skipped) + len(plan.demonstrations) == len(items) and plan.demonstrations
    for item in items:
        partner = by_image.get(item.images[0].key)
        assert (partner is None) == (item.id in skipped)
        if partner is None:
            continue
        for i, target in enumerate(item.captions):
            coin = random.Random(f"3:{item.id}:{i}").random()
            expected = authors_prompt(release_dict(partner), i, target, coin)
            assert AUTHORS.plain(target, plan.demonstrations[(item.task, item.id)][i]) == expected


# ----------------------------------------------------------------------------- runs


def run(model: Path, data: Path, out: Path, *extra: str) -> dict:
    argv = ["--model", str(model), "--output", str(out), "--data", str(data), "--device", "cpu"]
    assert bla_eval([*argv, *extra]) == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def records_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]


def test_paper_run_keeps_every_raw_generation_and_counts_unparsed(
    models, built_dataset, tmp_path, capsys
):
    out = tmp_path / "paper"
    results = run(
        models["blip2_t5"],
        built_dataset,
        out,
        "--protocol",
        "paper",
        "--tasks",
        "ap",
        "--limit",
        "3",
    )
    protocol = results["protocol"]
    assert protocol["name"] == "paper" and protocol["forward_path"] == "generate"
    assert protocol["prompt"] == AUTHORS.ask("{sentence}")
    generation = protocol["generation"]
    assert generation["call"].startswith("model.generate(**inputs)")
    assert {"max_length", "max_new_tokens", "do_sample", "num_beams"} <= set(generation)

    records = records_of(out)
    assert len(records) == 3
    # the raw text is what model.generate gives for the authors' prompt, decoded without specials
    scorer = load_scorer(
        str(models["blip2_t5"]), "generative", None, LoadOptions("cpu", protocol="paper")
    )
    item = load_bla(str(built_dataset), ("ap",), limit=1)[0]
    image = decode_image(item, item.images[0])
    inputs = scorer.processor(
        images=image, text=AUTHORS.plain(item.captions[0]), return_tensors="pt"
    )
    expected = scorer.processor.decode(scorer.model.generate(**inputs)[0], skip_special_tokens=True)
    assert records[0]["answers"][0] == expected
    for r in records:
        assert len(r["answers"]) == 4 and all(isinstance(a, str) for a in r["answers"])
        assert r["parsed"] == [parse_answer(a) for a in r["answers"]]
        assert r["scores"] == [ANSWER_SCORES[p] for p in r["parsed"]]

    binary = results["tasks"]["active_passive"]["binary"]
    unparsed = sum(p is None for r in records for p in r["parsed"])
    assert binary["unparsed"] == unparsed == results["tasks"]["active_passive"]["unparsed"]
    assert binary["parsed"] + binary["unparsed"] == 12
    if unparsed:
        assert (
            "Unparsed answers (counted nowhere, as the authors did): AP" in capsys.readouterr().out
        )


def test_paper_icl_dd_run_records_its_rule_seed_and_skips(models, built_dataset, tmp_path):
    out = tmp_path / "dd"
    results = run(
        models["llava"],
        built_dataset,
        out,
        *("--protocol", "paper-icl-dd", "--icl-seed", "5", "--tasks", "rc", "--limit", "20"),
    )
    protocol = results["protocol"]
    assert (protocol["name"], protocol["seed"]) == ("paper-icl-dd", 5)
    assert protocol["demonstration_rule"] == PAPER_DD.rule
    assert protocol["prompt_example"].endswith("[target] appropriate for this image? Answer: ")
    assert list(results["tasks"]) == ["relative_clause_learning"]
    skipped = protocol["without_partner"]["relative_clause_learning"]["count"]
    assert results["tasks"]["relative_clause_learning"]["n"] == 20 - skipped
    assert all("parsed" in r for r in records_of(out))


def test_paper_protocols_need_a_local_generative_model(built_dataset, tiny_clip, tmp_path, capsys):
    argv = ["--model", str(tiny_clip), "--output", str(tmp_path / "x"), "--device", "cpu"]
    assert bla_eval([*argv, "--data", str(built_dataset), "--protocol", "paper"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bla-eval: error: protocol 'paper' generates answers") and err[-1] == "\n"
    assert err.count("\n") == 1
