"""Prompt templates (the paper's strings), ``--prompt``, the ``--prompts`` sweep (equal to separate
runs, each image through the vision tower once) and the ``--control`` image-versus-prior controls,
with tiny random-weight LLaVA models on the real release."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from bla_eval.benchmarks import get_benchmark, load_items
from bla_eval.cli import main as bla_eval
from bla_eval.controls import control_items
from bla_eval.items import ImageRef, Item, decode_image
from bla_eval.protocols.templates import TEMPLATES, get_template
from bla_eval.testing.generative import build_blind_llava, build_llama_text, build_llava_chat

from tests.bla_eval.commands import call, eval_args, refused

pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCE = "the woman feeds the man"
SWEEP = ("bla", "openflamingo", "mme")


def test_the_papers_templates_give_the_papers_strings() -> None:
    question = "Is the sentence the woman feeds the man appropriate for this image? yes or no?"
    assert get_template("bla").plain(SENTENCE) == f"Question: {question} Answer:"
    # the authors' script: "Question: {} Answer: {}".format(question, "") (a trailing space)
    assert get_template("blip2").plain(SENTENCE) == f"Question: {question} Answer: "
    assert get_template("blip2").plain(SENTENCE) == get_template("authors").plain(SENTENCE)
    openflamingo = get_template("openflamingo")
    assert openflamingo.plain(SENTENCE) == f"<image>Question: {question} Short Answer:"
    assert openflamingo.text(SENTENCE) == f"Question: {question} Short Answer:"
    chat = openflamingo.chat(SENTENCE)[0]["content"]  # the image first, the marker not as text
    assert chat == [
        {"type": "image"},
        {"type": "text", "text": f"Question: {question} Short Answer:"},
    ]
    assert get_template("magma-fromage").plain(SENTENCE) == f"Q: {question} A:"
    assert all(t.source for t in TEMPLATES.values())


@pytest.fixture(scope="module")
def models(built_dataset: Path, tiny_model) -> dict[str, Path]:
    items = load_items(get_benchmark("bla"), str(built_dataset), ["active_passive"], "test", 3)
    texts = [c for i in items for c in i.captions]
    texts += [t.plain("x") for t in TEMPLATES.values()] * 5
    builders = {"llava": build_llava_chat, "blind": build_blind_llava, "llama": build_llama_text}
    return {name: tiny_model(name, texts, build) for name, build in builders.items()}


@pytest.fixture
def vision_images() -> Iterator[list[int]]:
    """Images through any CLIP vision tower while the test runs (a global forward hook)."""
    from transformers import CLIPVisionModel

    seen: list[int] = []

    def hook(module, args, kwargs, output) -> None:
        if isinstance(module, CLIPVisionModel):
            pixels = kwargs.get("pixel_values", args[0] if args else None)
            seen.append(int(pixels.shape[0]))

    handle = torch.nn.modules.module.register_module_forward_hook(hook, with_kwargs=True)
    yield seen
    handle.remove()


def run(model: Path, data: Path, out: Path, *extra: str) -> list[dict]:
    argv = eval_args(model, data, out, "--tasks", "ap", "--limit", "3", *extra)
    assert bla_eval(argv) == 0
    lines = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_sweep_equals_separate_runs_and_encodes_each_image_once(
    models, built_dataset, tmp_path, vision_images
) -> None:
    sweep = run(models["llava"], built_dataset, tmp_path / "sweep", "--prompts", ",".join(SWEEP))
    # three datapoints, three images in one vision batch for three templates; before it, the
    # first chunk's one-time check that stacking gives each image's own features (one by one)
    assert vision_images == [1, 1, 1, 3]
    single = {t: run(models["llava"], built_dataset, tmp_path / t, "--prompt", t) for t in SWEEP}
    for template in SWEEP:
        assert [r["prompts"][template] for r in sweep] == [r["scores"] for r in single[template]]
    plain = run(models["llava"], built_dataset, tmp_path / "plain")
    assert [r["scores"] for r in plain] == [r["scores"] for r in single["bla"]]
    headline = [{k: v for k, v in r.items() if k != "prompts"} for r in sweep]
    assert headline == plain  # the sweep's headline is its first template, record for record
    results = json.loads((tmp_path / "sweep" / "results.json").read_text(encoding="utf-8"))
    plain_results = json.loads((tmp_path / "plain" / "results.json").read_text(encoding="utf-8"))
    assert results["tasks"] == plain_results["tasks"]
    assert list(results["prompts"]) == list(SWEEP)
    sensitivity = results["sensitivity"]["tasks"]["active_passive"]
    assert sensitivity["best"] in sensitivity["may_be_best"]
    assert set(results["protocol"]["templates"]) == set(SWEEP)
    # one number, one interval: the headline's in the main table is its template's in sensitivity
    main = results["confidence_intervals"]["tasks"]["active_passive"]["ranking"]
    assert main["sentence_accuracy"] == sensitivity["templates"]["bla"]["ci"]
    assert "prompts" not in plain_results and "prompts" not in plain[0]


def test_the_sweeps_numbers_are_checked_and_a_resume_keeps_the_template(
    models, built_dataset, tmp_path, capsys
) -> None:
    out = tmp_path / "sweep"
    run(models["llava"], built_dataset, out, "--prompts", "bla,mme")
    code, err = call(bla_eval, ["robustness", str(out)], capsys)
    assert code == 0
    path = out / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["sensitivity"]["tasks"]["active_passive"]["spread"]["value"] = 0.5
    path.write_text(json.dumps(results), encoding="utf-8")
    refused(bla_eval, ["robustness", str(out)], capsys, "sensitivity.tasks.active_passive.spread")
    argv = eval_args(models["llava"], built_dataset, out, "--tasks", "ap", "--limit", "3")
    refused(bla_eval, [*argv, "--prompts", "bla", "--resume"], capsys, "prompts")


def test_a_blind_model_gains_nothing_from_the_image_and_is_flagged(
    models, built_dataset, tmp_path, vision_images, capsys
) -> None:
    records = run(models["blind"], built_dataset, tmp_path / "blind", "--control", "shuffled")
    assert vision_images == [1, 1, 1, 3]  # the shuffled images are the run's own: no more
    items = load_items(get_benchmark("bla"), str(built_dataset), ["active_passive"], "test", 3)
    own = {i.id: i.images[0].key for i in items}
    assert all(r["control"]["images"][0] not in (own[r["id"]], None) for r in records)
    assert {r["control"]["images"][0] for r in records} == set(own.values())
    results = json.loads((tmp_path / "blind" / "results.json").read_text(encoding="utf-8"))
    gain = results["control"]["tasks"]["active_passive"]["image_gain"]
    # the same gain (0) on every resample of 3 datapoints is no evidence of priors
    assert gain["gain"] == 0.0 and gain["ci"] == [0.0, 0.0] and gain["variation"] is False
    assert gain["outcome"] == "inconclusive" and not gain["from_priors"]
    assert results["control"]["answers_from_priors"] is False
    capsys.readouterr()
    assert bla_eval(["robustness", str(tmp_path / "blind")]) == 0
    omitted = [line for line in capsys.readouterr().out.splitlines() if "text-only" in line]
    assert omitted == [  # the baseline column left out, in one line that says why
        f"No text-only baseline column for {tmp_path / 'blind'}: no run of the `text` kind is "
        "among the runs given (add one with the same --tasks and --limit, e.g. of --model smollm2)."
    ]
    analysis = tmp_path / "analysis"
    argv = ["analyze", str(tmp_path / "blind"), "--output", str(analysis)]
    code, err = call(bla_eval, argv, capsys)
    assert code == 0, err
    report = (analysis / "report.md").read_text(encoding="utf-8")
    assert "## Prompt sensitivity and image gain" in report
    assert "against the shuffled control" in report and "inconclusive (no variation)" in report


def test_the_text_kind_asked_a_template_gives_p_yes_without_the_image(
    models, built_dataset, tmp_path, capsys
) -> None:
    asked = run(models["llama"], built_dataset, tmp_path / "asked", "--prompts", "bla,mme")
    assert all(0 <= s <= 1 for r in asked for t in ("bla", "mme") for s in r["prompts"][t])
    assert asked[0]["prompts"]["bla"] != asked[0]["prompts"]["mme"]
    text = run(models["llama"], built_dataset, tmp_path / "text")  # the text-only baseline
    assert all(s < 0 for r in text for s in r["scores"])  # mean log-probabilities
    code, err = call(bla_eval, ["robustness", str(tmp_path / "text")], capsys)
    assert code == 2 and "nothing to report" in err
    blind = run(models["blind"], built_dataset, tmp_path / "blind", "--control", "blank")
    assert all(r["control"]["images"][0].startswith("blank:") for r in blind)
    capsys.readouterr()
    assert bla_eval(["robustness", str(tmp_path / "blind"), str(tmp_path / "text")]) == 0
    out = capsys.readouterr().out
    assert "| text-only baseline |" in out and "No text-only baseline" not in out


def test_the_shuffled_control_never_shows_a_datapoint_its_own_image(built_dataset) -> None:
    items = load_items(
        get_benchmark("bla"), str(built_dataset), ["active_passive", "coordination"], "test", 40
    )
    first, again = control_items(items, "shuffled", 7), control_items(items, "shuffled", 7)
    assert [t.images for t in first] == [t.images for t in again]
    assert [t.images for t in first] != [t.images for t in control_items(items, "shuffled", 8)]
    for item, twin in zip(items, first, strict=True):
        assert twin.images[0].key != item.images[0].key
        assert (twin.task, twin.id, twin.captions) == (item.task, item.id, item.captions)
        assert twin.images[0] in {i.images[0] for i in items if i.task == item.task}


def test_a_datapoint_of_two_images_is_shown_two_images_of_another() -> None:
    def item(n: int, *keys: str) -> Item:
        images = tuple(ImageRef(key) for key in keys)
        return Item("winoground", "winoground", str(n), images, ("a", "b"), ((1, 0), (0, 1)))

    items = [item(0, "x", "y"), item(1, "y", "z"), item(2, "u", "v"), item(3, "w", "x")]
    items.append(item(4, "p", "q"))
    for seed in range(20):
        for own, twin in zip(items, control_items(items, "shuffled", seed), strict=True):
            assert twin.images in {other.images for other in items}
            assert not {r.key for r in own.images} & {r.key for r in twin.images}
    with pytest.raises(
        ValueError, match=r"winoground item [01] has no other datapoint with 2 image"
    ):
        control_items([item(0, "x", "y"), item(1, "y", "x")], "shuffled")


def test_the_blank_control_has_the_originals_size_and_mean_colour(built_dataset) -> None:
    from PIL import ImageStat

    items = load_items(get_benchmark("bla"), str(built_dataset), ["relative_clause"], "test", 2)
    for item, twin in zip(items, control_items(items, "blank"), strict=True):
        original = decode_image(item, item.images[0])
        blank = decode_image(twin, twin.images[0])
        assert blank.size == original.size
        assert blank.getcolors() is not None and len(blank.getcolors()) == 1
        mean = [round(v) for v in ImageStat.Stat(original).mean]
        assert list(blank.getpixel((0, 0))) == mean


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--prompt", "nope"], "--prompt: invalid choice: 'nope'"),
        (["--prompts", "bla,mme,bla"], "template 'bla' is listed twice"),
        (["--prompts", "bla,nope"], "unknown prompt template 'nope'"),
        (["--prompts", "all,bla"], "'all' stands alone"),
        (["--control", "dark"], "--control: invalid choice: 'dark'"),
        (["--prompt", "mme", "--prompts", "bla,mme"], "not both"),
        (["--prompt", "mme", "--protocol", "paper"], "asks with its own template"),
    ],
)
def test_bad_prompt_and_control_options_are_one_line_errors(
    models, built_dataset, tmp_path, capsys, extra, message
) -> None:
    code, err = call(
        bla_eval, eval_args(models["llava"], built_dataset, tmp_path / "o", *extra), capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_a_kind_that_asks_no_question_refuses_a_template(
    tiny_clip, built_dataset, tmp_path, capsys
) -> None:
    argv = eval_args(tiny_clip, built_dataset, tmp_path / "o", "--prompt", "mme")
    code, err = call(bla_eval, argv, capsys)
    assert code == 2 and "model kind 'contrastive' asks no question" in err
    assert not (tmp_path / "o").exists()


def test_an_endpoint_is_sent_the_templates_question_with_the_image_first() -> None:
    from bla_eval.api.messages import api_messages

    url = "data:image/png;base64,AAAA"
    [message] = api_messages(SENTENCE, (), url, get_template("openflamingo"))
    image, text = message["content"]
    assert image == {"type": "image_url", "image_url": {"url": url}}
    assert text["text"] == get_template("openflamingo").text(SENTENCE)
    [plain] = api_messages(SENTENCE, (), None, get_template("mme"))
    assert plain["content"] == get_template("mme").plain(SENTENCE)


@pytest.mark.parametrize("control", ["shuffled", "blank"])
def test_a_control_of_a_model_shown_no_image_is_refused_before_anything_is_scored(
    models, built_dataset, tmp_path, capsys, control
) -> None:
    argv = eval_args(models["llama"], built_dataset, tmp_path / "o", "--control", control)
    message = f"--control {control}: model kind 'text' is shown no image"
    refused(bla_eval, [*argv, "--kind", "text"], capsys, message)
    assert not (tmp_path / "o").exists()
