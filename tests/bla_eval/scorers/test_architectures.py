"""The architecture matrix (``bla_eval.testing.architectures``): every row scores end to end (the
region detector ``butd`` gives its 36 regions of each image).

Each row is a tiny random-weight model of a real transformers architecture with its real model
and processor classes, built once per transformers version and texts (the session's
``tiny_model``), and run by ``bla-eval`` at default settings on the real release's AP datapoints:
finite scores that are not all equal, and the forward path of the row. The generative rows' fast
path equals their plain path on real images, with and without demonstrations (float32,
within 1e-4). ``docs/models.md`` shows the same rows.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.items import decode_image
from bla_eval.protocols import get_template
from bla_eval.testing.architectures import ARCHITECTURES, REGIONS

from tests.bla_eval.commands import call, eval_args, refused

pytestmark = pytest.mark.usefixtures("one_thread")
MODELS_DOC = Path(__file__).resolve().parents[3] / "docs" / "models.md"
LIMIT = 2
"""AP datapoints per end-to-end run (8 sentences)."""


@pytest.fixture(scope="module")
def ap_points(built_dataset: Path) -> list:
    from bla_eval.benchmarks.bla import load_bla

    return [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:LIMIT]


@pytest.fixture(scope="module")
def texts(ap_points) -> list[str]:
    """What the tiny tokenizers are trained on: the scored sentences and the question."""
    template = get_template()
    return [c for p in ap_points for c in p.captions] + [template.question] * 5


@pytest.fixture(scope="module")
def models(texts, tiny_model) -> dict[str, Path]:
    return {name: tiny_model(name, texts) for name in ARCHITECTURES}


def doc_row(name: str) -> list[str]:
    """The cells of ``name``'s row in docs/models.md."""
    for line in MODELS_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == f"`{name}`":
            return cells
    raise AssertionError(f"docs/models.md has no row for {name}")


@pytest.fixture(scope="module")
def region_tsv(built_dataset: Path, tmp_path_factory) -> Path:
    """Region features of the scored AP images, in the authors' TSV layout."""
    from bla_eval.testing.region_models import dataset_images, write_region_tsv

    images = dataset_images(str(built_dataset), ["ap"], LIMIT)
    return write_region_tsv(tmp_path_factory.mktemp("regions") / "regions.tsv", images)


@pytest.mark.parametrize("name", list(ARCHITECTURES))
def test_architecture_scores_end_to_end(
    name, models, built_dataset, tmp_path, capsys, ap_points, request
):
    arch = ARCHITECTURES[name]
    out = tmp_path / "run"
    argv = eval_args(models[name], built_dataset, out, "--tasks", "ap", "--limit", LIMIT)
    argv += list(arch.flags)
    if arch.path == REGIONS:  # the model reads region features, not pixels
        argv += ["--regions", str(request.getfixturevalue("region_tsv"))]
    cells = doc_row(name)
    assert cells[1] == arch.kind and cells[2] == arch.path, cells
    if arch.kind == "regions":  # a detector: --regions takes it, it extracts what others read
        _check_detector(models[name], ap_points)
        assert cells[3] == "extracts", cells
        return
    if arch.upstream_error:
        refused(bla_eval, argv, capsys, arch.upstream_error)
        assert cells[3] == "fails upstream", cells
        return
    if arch.out_of_scope:
        refused(bla_eval, argv, capsys, arch.out_of_scope)
        assert cells[3] == "out of scope" and not out.exists(), cells
        return
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    assert cells[3] == "scores", cells
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    scores = [s for r in records for s in r["scores"]]
    assert len(records) == LIMIT and all(math.isfinite(s) for s in scores)
    assert len(set(scores)) > 1, scores
    if arch.kind == "generative":  # each sentence is read: an image's four scores differ
        assert all(len(set(r["scores"])) > 1 for r in records), records
    results = json.loads((out / "results.json").read_text())
    assert results["kind"] == arch.kind
    if arch.kind == "generative":
        assert results["protocol"]["forward_path"] == arch.path, results["protocol"]


def _check_detector(folder: Path, points: list) -> None:
    """36 finite regions inside each of the points' images at the default resize."""
    import numpy as np
    from bla_eval.regions.detector import BottomUpDetector

    images = [decode_image(p, p.images[0]) for p in points]
    detected = BottomUpDetector.from_pretrained(str(folder)).detect(images)
    for image, regions in zip(images, detected, strict=True):
        assert regions.count == 36 and np.isfinite(regions.features).all()
        assert regions.image_size == (image.height, image.width)
        assert (regions.boxes >= 0).all() and (regions.boxes[:, 2] <= image.width).all()


def test_a_prompt_the_processor_sends_to_the_decoder_is_read(models, ap_points):
    """Pix2Struct's processor puts the prompt into ``decoder_input_ids``: the first answer
    token is read after the decoder start and the whole prompt, batched (padded on the right)
    as one prompt at a time through transformers, and the sentence changes it."""
    import torch
    from bla_eval.scorers import LoadOptions, Query, load_scorer

    scorer = load_scorer(str(models["pix2struct"]), "generative", 3, LoadOptions(device="cpu"))
    image = decode_image(ap_points[0], ap_points[0].images[0]).resize((40, 30))
    queries = [Query(c) for c in ap_points[0].captions]
    got = scorer.next_token_logits([image] * len(queries), queries)
    start = scorer.model.config.text_config.decoder_start_token_id
    want = []
    with torch.inference_mode():
        for query in queries:
            enc = scorer.processor(images=[image], text=[scorer.prompt(query)], return_tensors="pt")
            enc.pop("decoder_attention_mask")
            ids = torch.cat([torch.tensor([[start]]), enc.pop("decoder_input_ids")], 1)
            want.append(scorer.model(**enc, decoder_input_ids=ids).logits[0, -1].float())
    assert len({len(scorer.tokenizer(scorer.prompt(q))["input_ids"]) for q in queries}) > 1
    assert torch.allclose(got, torch.stack(want), atol=1e-4, rtol=0)
    assert not torch.allclose(want[0], want[1], atol=1e-3, rtol=0)


GENERATIVE = [
    n
    for n, a in ARCHITECTURES.items()
    if a.kind == "generative" and not a.upstream_error and not a.out_of_scope
]


@pytest.mark.parametrize("name", GENERATIVE)
def test_fast_path_equals_plain_path(name, models, ap_points):
    """Real images and sentences, zero-shot and with demonstrations: the path a row takes gives
    the plain path's scores and answers (and a plain row says why)."""
    from bla_eval.scorers import LoadOptions, Query, load_scorer
    from bla_eval.scorers.prefix_cache import PLAIN

    arch = ARCHITECTURES[name]
    options = LoadOptions(device="cpu", trust_remote_code="--trust-remote-code" in arch.flags)
    scorer = load_scorer(str(models[name]), "generative", 3, options)
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in ap_points]
    demos = ((ap_points[0].captions[0], "yes"), (ap_points[0].captions[2], "no"))
    queries = [
        [Query(c) for c in p.captions] + [Query(c, demos) for c in p.captions[1:3]]
        for p in ap_points
    ]
    fast = scorer.score(images, queries)
    described = scorer.describe()
    assert described["forward_path"] == arch.path, described["forward_path_reason"]
    if arch.path == PLAIN:
        assert described["forward_path_reason"]
        return
    scorer.path, scorer.batch_size = PLAIN, 1
    plain = scorer.score(images, queries)
    for got, want in zip(fast.scores, plain.scores, strict=True):
        assert got == pytest.approx(want, abs=1e-4)
    assert fast.answers == plain.answers


def test_models_doc_lists_every_row_and_nothing_else():
    text = MODELS_DOC.read_text(encoding="utf-8")
    named = re.findall(r"^\| `([^`]+)` \|", text, flags=re.M)
    assert sorted(named) == sorted(ARCHITECTURES)


def test_a_prompt_longer_than_the_sliding_window_falls_back_to_the_plain_path(
    texts, ap_points, tiny_model
):
    """Gemma 3 with a 16-token window: the cache would drop tokens, so the scorer says so and
    scores on the plain path, with the plain path's scores."""
    from bla_eval.scorers import LoadOptions, Query, load_scorer
    from bla_eval.scorers.prefix_cache import PLAIN
    from bla_eval.testing.gemma import build_gemma3

    model = tiny_model(
        "gemma3-window-16", texts, lambda f, t: build_gemma3(f, t, sliding_window=16)
    )
    scorer = load_scorer(str(model), "generative", 3, LoadOptions(device="cpu"))
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in ap_points]
    queries = [[Query(c) for c in p.captions] for p in ap_points]
    fell_back = scorer.score(images, queries)
    described = scorer.describe()
    assert described["forward_path"] == PLAIN
    assert "sliding window (16 tokens)" in described["forward_path_reason"]
    assert fell_back.scores == scorer.score(images, queries).scores


def test_yes_and_no_in_pieces_are_read_from_their_first_pieces(texts):
    """A tokenizer without a one-token "yes" or "no": the first piece of each spelling, none
    shared by both answers; a tokenizer with one-token spellings keeps exactly those."""
    from bla_eval.protocols.templates import NO_WORDS, YES_WORDS, answer_token_ids
    from bla_eval.testing.processors import multimodal_tokenizer

    pieces = multimodal_tokenizer(texts, style="yes-in-pieces")
    yes, no, how = answer_token_ids(pieces)
    assert how.startswith("first piece")
    assert not set(yes) & set(no)
    assert {pieces.decode([i]).strip() for i in yes} == {"y", "Y"}
    assert {pieces.decode([i]).strip() for i in no} == {"n", "N"}
    for style in ("byte-level", "sentencepiece"):
        whole = multimodal_tokenizer(texts, style=style)
        yes, no, how = answer_token_ids(whole)
        assert how == "single-token spellings"
        assert {whole.decode([i]).strip() for i in yes} <= set(w.strip() for w in YES_WORDS)
        assert {whole.decode([i]).strip() for i in no} <= set(w.strip() for w in NO_WORDS)


REMOTE = [n for n, a in ARCHITECTURES.items() if "--trust-remote-code" in a.flags]


@pytest.mark.parametrize("name", REMOTE)
def test_remote_code_needs_the_flag(name, models, built_dataset, tmp_path, capsys):
    """A model that runs code of its own (whichever auto class its ``auto_map`` names) is
    refused in one line naming --trust-remote-code; with the flag, its class finds every
    weight in the checkpoint (none drawn anew at each load)."""
    import transformers as tf

    argv = eval_args(models[name], built_dataset, tmp_path / "run", "--limit", 1)
    refused(bla_eval, argv, capsys, "--trust-remote-code", "auto_map")
    assert not (tmp_path / "run").exists()
    (auto_class,) = set(json.loads((models[name] / "config.json").read_text())["auto_map"]) - {
        "AutoConfig"
    }
    loader = getattr(tf, auto_class)
    _, info = loader.from_pretrained(models[name], trust_remote_code=True, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"], info


@pytest.mark.parametrize("name", ["fuyu", "video_llava", "minicpmv4_6"])
def test_in_context_runs_where_the_image_tensor_is_renamed(
    name, models, built_dataset, tmp_path, capsys
):
    """``--protocol icl-sd`` (demonstrations before the question) on the rows whose processor
    names the image tensor differently or whose feature method delegates ``*args``: it scores,
    with the path of the row."""
    out = tmp_path / "run"
    argv = eval_args(models[name], built_dataset, out, "--tasks", "ap", "--limit", 1)
    code, err = call(bla_eval, [*argv, "--protocol", "icl-sd"], capsys)
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"]["name"] == "icl-sd"
    assert results["protocol"]["forward_path"] == ARCHITECTURES[name].path
    scores = [
        s
        for line in (out / "scores.jsonl").read_text().splitlines()
        for s in json.loads(line)["scores"]
    ]
    assert all(math.isfinite(s) for s in scores) and len(set(scores)) > 1, scores


def vilt_cutting_at(out: Path, texts: list[str], limit: int) -> tuple[Path, Any]:
    """ViLT whose tokenizer cuts at ``limit`` tokens: its folder and each text's token count."""
    import transformers as tf
    from bla_eval.testing.vilt import build_vilt_itm

    build_vilt_itm(out, texts, text_positions=limit)
    tokenizer = tf.AutoTokenizer.from_pretrained(out)
    return out, lambda s: len(tokenizer(s)["input_ids"])


def open_clip_cutting_at(out: Path, texts: list[str], limit: int) -> tuple[Path, Any]:
    """open_clip's CLIP with a ``limit``-token context: its ``local-dir:`` id and each text's
    token count (its BPE pieces, start and end)."""
    import open_clip
    from bla_eval.testing.dual_encoders import build_open_clip

    build_open_clip(out, texts, context_length=limit)
    model = f"local-dir:{out}"
    return model, lambda s: len(open_clip.get_tokenizer(model).encode(s)) + 2


@pytest.mark.parametrize("build", [vilt_cutting_at, open_clip_cutting_at])
def test_sentences_cut_to_the_text_limit_are_counted_in_results(
    build, texts, ap_points, built_dataset, tmp_path, capsys
):
    """A text encoder of 9 positions (ViLT's matching head, open_clip's text tower): the
    sentences of the run longer than that (special tokens included) are cut, said once on
    stderr and counted in results.json."""
    model, length = build(tmp_path / "model", texts, 9)
    sentences = {c for p in ap_points for c in p.captions}
    longer = {s for s in sentences if length(s) > 9}
    assert 0 < len(longer) < len(sentences)
    out = tmp_path / "run"
    argv = eval_args(model, built_dataset, out, "--tasks", "ap", "--limit", LIMIT)
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    assert err.count("longer than the model's 9 text tokens") == 1, err
    protocol = json.loads((out / "results.json").read_text())["protocol"]
    assert protocol["text_max_length"] == 9
    assert protocol["truncated_sentences"] == len(longer)
