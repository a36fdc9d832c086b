"""The flamingo kind against open_flamingo 2.0.1 itself: a tiny OpenFlamingo built by upstream's
own ``create_model_and_transforms`` (a tiny open_clip ViT registered by its config, a tiny
GPT-NeoX saved as a folder) in the reference environment (``.ci/envs/openflamingo.txt``), its
checkpoint saved as upstream's training saves it, then loaded by the project from
``checkpoint.pt`` + ``config.json``: the special tokens' ids, each P(yes) of upstream's forward
on the same tokens (1e-5), ``--score caption`` against ``log_softmax`` of upstream's logits
(1e-4), and the whole state dict (duplicates and vision tower) loaded with its unused keys
listed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
from bla_eval.protocols.templates import get_template, yes_probability
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.testing.flamingo import TEXT, VISION, save_language_model
from PIL import Image

from tests.harness_envs import harness_python

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.slow]
HERE = Path(__file__).parent
COLOURS = [[200, 30, 30], [20, 40, 220]]
SENTENCES = ["the dog chases the cat", "the cat is chased by the dog"]
DEMOS = (("the dog sleeps", "yes"), ("the cat flies", "no"))


def prompts() -> list[tuple[int, Query, str]]:
    """(image, query, its text) of every check: the authors' template, and Appendix G's
    in-context format (three ``<image>``)."""
    authors, icl = get_template("openflamingo-authors"), get_template("openflamingo-icl")
    rows = []
    for image in range(len(COLOURS)):
        for sentence in SENTENCES:
            rows.append((image, Query(sentence), authors.plain(sentence)))
            q = Query(sentence, DEMOS, "openflamingo-icl")
            rows.append((image, q, icl.plain(sentence, DEMOS)))
    return rows


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> Path:
    """The work folder after the reference environment ran ``upstream_reference.py``."""
    work = tmp_path_factory.mktemp("openflamingo-upstream")
    torch.manual_seed(0)
    words = [t for _, _, t in prompts()] + SENTENCES + ["yes no"]
    save_language_model(work / "lm", words, "gpt_neox")
    cfg = {"embed_dim": 16, "vision_cfg": VISION, "text_cfg": TEXT}
    (work / "vision.json").write_text(json.dumps(cfg))
    captions = [[i, "<image>" + s] for i in range(len(COLOURS)) for s in SENTENCES]
    job = {"colours": COLOURS, "prompts": [[i, t] for i, _, t in prompts()] + captions}
    (work / "job.json").write_text(json.dumps(job))
    python = harness_python("openflamingo")
    done = subprocess.run(
        [str(python), str(HERE / "upstream_reference.py"), str(work)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return work


def model_folder(work: Path, checkpoint: str, out: Path) -> Path:
    """A folder as a user has it: ``checkpoint.pt``, upstream's ``config.json``, the language
    model, and the vision tower (upstream's weights) as an open_clip ``local-dir:`` folder."""
    import open_clip
    from safetensors.torch import save_file

    out.mkdir()
    shutil.copytree(work / "lm", out / "lm")
    shutil.copy(work / checkpoint, out / "checkpoint.pt")
    cfg = json.loads((work / "vision.json").read_text())
    clip = open_clip.model.CLIP(**cfg)
    state = torch.load(work / "checkpoint.pt", weights_only=True)
    visual = {k.removeprefix("vision_encoder."): v for k, v in state.items()}
    clip.visual.load_state_dict({k: visual[k] for k in clip.visual.state_dict()})
    (out / "vision").mkdir()
    config = {"model_cfg": cfg, "preprocess_cfg": {}}
    (out / "vision" / "open_clip_config.json").write_text(json.dumps(config))
    save_file(clip.state_dict(), out / "vision" / "open_clip_model.safetensors")
    config = {
        "clip_vision_encoder_path": "local-dir:vision",
        "clip_vision_encoder_pretrained": None,
        "lang_encoder_path": "lm",
        "tokenizer_path": "lm",
        "cross_attn_every_n_layers": 2,
    }
    (out / "config.json").write_text(json.dumps(config))
    return out


def images() -> list[Image.Image]:
    return [Image.new("RGB", (40, 30), tuple(c)) for c in COLOURS]


def test_p_yes_equals_upstreams_forward(upstream: Path, tmp_path: Path) -> None:
    folder = model_folder(upstream, "released.pt", tmp_path / "model")
    reference = json.loads((upstream / "reference.json").read_text())
    scorer = load_scorer(str(folder), options=LoadOptions(device="cpu"))
    assert scorer.kind == "flamingo"
    assert scorer.describe()["checkpoint_keys_renamed"] == {
        "lang_encoder.embed_out.weight": "lang_encoder.lm_head.weight"
    }
    tok = scorer.tokenizer
    assert reference["token_ids"] == {
        "<|endofchunk|>": tok.convert_tokens_to_ids("<|endofchunk|>"),
        "<image>": tok.convert_tokens_to_ids("<image>"),
        "pad": tok.pad_token_id,
    }
    rows = prompts()
    groups = [[q for i, q, _ in rows if i == image] for image in range(len(COLOURS))]
    pixels = [scorer.prepare_image(im) for im in images()]
    scored = scorer.score(pixels, groups)
    ours = [s for group in scored.scores for s in group]
    ordered = [r for image in range(len(COLOURS)) for r in rows if r[0] == image]
    theirs = []
    for image, query, text in ordered:
        row = reference["rows"][rows.index((image, query, text))]
        assert row["ids"] == tok(text)["input_ids"]
        logits = torch.tensor(row["logits"][-1])[None]
        theirs.append(yes_probability(logits, scorer.yes_ids, scorer.no_ids).item())
    assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) < 1e-5
    assert len({round(s, 6) for s in theirs[:4]} | {round(s, 6) for s in theirs[4:]}) > 4
    assert ours[0] != ours[len(ours) // 2]  # the image changes the score


def test_caption_equals_log_softmax_of_upstreams_logits(upstream: Path, tmp_path: Path) -> None:
    folder = model_folder(upstream, "released.pt", tmp_path / "model")
    reference = json.loads((upstream / "reference.json").read_text())
    scorer = load_scorer(str(folder), options=LoadOptions(device="cpu", score="caption"))
    pixels = [scorer.prepare_image(im) for im in images()]
    terms = scorer.caption_terms(pixels, [SENTENCES] * len(COLOURS))
    start = len(prompts())
    for k, cell in enumerate(t for row in terms for t in row):
        row = reference["rows"][start + k]
        ids = row["ids"]
        head = len(scorer.tokenizer("<image>")["input_ids"])
        logp = torch.tensor(row["logits"]).log_softmax(-1)
        expected = sum(logp[p - 1, ids[p]].item() for p in range(head, len(ids)))
        assert cell["tokens"] == len(ids) - head
        assert abs(cell["log_p_image"] - expected) < 1e-4


def test_the_whole_state_dict_loads_with_its_unused_keys_listed(
    upstream: Path, tmp_path: Path
) -> None:
    folder = model_folder(upstream, "checkpoint.pt", tmp_path / "model")
    scorer = load_scorer(str(folder), options=LoadOptions(device="cpu"))
    record = scorer.describe()
    unused = record["checkpoint_keys_unused"]
    assert unused and all(
        k.startswith(("lang_encoder.old_decoder_blocks.", "lang_encoder.gated_cross_attn_layers."))
        for k in unused
    )
    assert record["checkpoint_keys_renamed"] == {}  # saved by transformers 5: lm_head
    state = torch.load(folder / "checkpoint.pt", weights_only=True)
    assert record["checkpoint_keys_used"] + len(unused) == len(state)
