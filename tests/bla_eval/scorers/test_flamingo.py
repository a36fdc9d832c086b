"""The flamingo kind on the tiny OpenFlamingo rows of the architecture matrix: the authors'
prompt byte for byte, batched scores equal to one row at a time, ``generate`` equal to greedy
decoding by repeated full forwards, and ``bla-eval`` under the authors' protocol and
``caption-pmi``."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch
from bla_eval.cli import main as bla_eval
from bla_eval.items import decode_image
from bla_eval.protocols.templates import get_template
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.scorers.flamingo import generate

from tests.bla_eval.commands import call, eval_args, refused

pytestmark = pytest.mark.usefixtures("one_thread")

AUTHORS_SOURCE = (
    'f"<image>Question: Is the sentence {caption} appropriate for this image? yes or no? \\\n'
    "            Short answer:{'<|endofchunk|>' if answer is not None else ''}\""
)
"""``prompt_question`` of the authors' evaluation_models/openflamingo/model_container.py
(shin-ee-chen/BLA), its two source lines as written: a backslash continues the string literal."""


@pytest.fixture(scope="module")
def ap_points(built_dataset: Path) -> list:
    from bla_eval.benchmarks.bla import load_bla

    return [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:2]


@pytest.fixture(scope="module")
def folder(ap_points, tiny_model) -> Path:
    texts = [c for p in ap_points for c in p.captions] + [get_template().question] * 5
    return tiny_model("openflamingo", texts)


def test_the_authors_template_is_their_string_byte_for_byte() -> None:
    literal = ast.Expression(ast.parse(AUTHORS_SOURCE, mode="eval").body)
    values = {"caption": "S", "answer": None}
    sent = eval(compile(literal, "<authors>", "eval"), values)  # noqa: S307 - a literal
    assert get_template("openflamingo-authors").plain("S") == sent
    assert "no?" + " " * 13 + "Short answer:" in sent


def test_batched_scores_equal_one_at_a_time(folder, ap_points) -> None:
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in ap_points]
    demos = ((ap_points[0].captions[0], "yes"), (ap_points[0].captions[2], "no"))
    queries = [
        [Query(c) for c in p.captions] + [Query(p.captions[1], demos, "openflamingo-icl")]
        for p in ap_points
    ]
    batched = load_scorer(str(folder), options=LoadOptions(device="cpu"), batch_size=3)
    single = load_scorer(str(folder), options=LoadOptions(device="cpu"), batch_size=1)
    pixels = [batched.prepare_image(im) for im in images]
    got, want = batched.score(pixels, queries), single.score(pixels, queries)
    for a, b in zip(got.scores, want.scores, strict=True):
        assert a == pytest.approx(b, abs=1e-6)
    assert len({s for row in got.scores for s in row}) > 4
    assert got.scores[0][:4] != got.scores[1][:4]


def test_generate_is_greedy_decoding_by_full_forwards(folder, ap_points) -> None:
    scorer = load_scorer(str(folder), options=LoadOptions(device="cpu"))
    image = scorer.prepare_image(decode_image(ap_points[0], ap_points[0].images[0]))
    features = scorer.features([image, image])
    prompts = [scorer.prompt(Query(c)) for c in ap_points[0].captions[:2]]
    prompts[1] = prompts[1].replace("Question:", "Question: Question:")  # uneven: left padding
    enc = scorer.encode(prompts)
    media = scorer.media(features, [0, 1], prompts)
    new = generate(scorer.model, media, enc, scorer.tokenizer.pad_token_id, 1, 6)
    beams = generate(scorer.model, media, enc, scorer.tokenizer.pad_token_id, 2, 6)
    assert beams.shape[0] == 2
    with torch.inference_mode():
        for row, prompt in enumerate(prompts):
            ids = scorer.tokenizer(prompt, return_tensors="pt")["input_ids"]
            for step in range(new.shape[1]):
                mask = torch.ones_like(ids)
                logits = scorer.model(media[row : row + 1], ids, mask).logits[0, -1]
                token = int(logits.argmax())
                assert token == int(new[row, step])
                if token == scorer.model.eoc_token_id:
                    break
                ids = torch.cat([ids, torch.tensor([[token]])], 1)


@pytest.mark.slow  # up to the authors' 2000 new tokens per sentence
def test_the_authors_protocol_generates_with_two_beams(folder, built_dataset, tmp_path, capsys):
    out = tmp_path / "run"
    argv = eval_args(folder, built_dataset, out, "--tasks", "ap", "--limit", 1)
    code, err = call(bla_eval, [*argv, "--protocol", "paper"], capsys)
    assert code == 0, err
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["generation"]["num_beams"] == 2
    assert protocol["prompt"] == get_template("openflamingo-authors").question
    record = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
    assert len(record["answers"]) == 4 and set(record["scores"]) <= {0.0, 0.5, 1.0}


def test_caption_pmi_runs_end_to_end(folder, built_dataset, tmp_path, capsys):
    out = tmp_path / "run"
    argv = eval_args(folder, built_dataset, out, "--tasks", "ap", "--limit", 1)
    code, err = call(bla_eval, [*argv, "--score", "caption-pmi", "--pmi-alpha", "1"], capsys)
    assert code == 0, err
    record = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
    assert len(record["log_p_prior"]) == 4 and record["log_p_prior"] != record["log_p_image"]
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["prior_input"].startswith("the prompt with a blank grey image")


def test_a_folder_with_a_bad_config_is_one_line(tmp_path, built_dataset, capsys) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "checkpoint.pt").write_bytes(b"")
    (model / "config.json").write_text(json.dumps({"lang_encoder_path": "x"}))
    argv = eval_args(model, built_dataset, tmp_path / "run", "--tasks", "ap", "--limit", 1)
    refused(bla_eval, argv, capsys, "lacks 'clip_vision_encoder_path'")
    assert not (tmp_path / "run").exists()


def test_in_context_shows_appendix_g_and_records_it(folder, built_dataset, tmp_path, capsys):
    out = tmp_path / "run"
    argv = eval_args(folder, built_dataset, out, "--tasks", "ap", "--limit", 1)
    code, err = call(bla_eval, [*argv, "--protocol", "icl-sd"], capsys)
    assert code == 0, err
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["template"] == get_template("openflamingo-authors").question
    assert protocol["prompt_example"].count("<image>") == 3
    assert "Short Answer: yes.<|endofchunk|><image>Question:" in protocol["prompt_example"]
