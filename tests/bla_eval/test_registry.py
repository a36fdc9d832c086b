"""One registry per idea: a new task, benchmark, model kind, protocol and prompt template are
registered inside a test only, and the engine, the metric, the Markdown report, the CLI and the
Space's builders all find them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from bla_eval.benchmarks import Benchmark, register_benchmark, unregister_benchmark
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import build_parser
from bla_eval.config import RunConfig
from bla_eval.data import load_split
from bla_eval.items import ImageRef, Item, decode_image, image_key
from bla_eval.protocols import (
    PromptTemplate,
    Protocol,
    get_protocol,
    get_template,
    partner_config,
    register_protocol,
    register_template,
    unregister_protocol,
)
from bla_eval.protocols.in_context import engine_record
from bla_eval.protocols.templates import unregister_template
from bla_eval.report import markdown_table
from bla_eval.run import evaluate
from bla_eval.scorers import (
    Capabilities,
    LoadOptions,
    Query,
    Scored,
    Scorer,
    detect_kind,
    load_scorer,
    register_kind,
    unregister_kind,
)
from bla_eval.testing.generative import build_blip2_generative
from bla_space import evaluate_tab, explore_data, runner, views
from bla_space import neighbours as neighbour_tab

from bla_metric import formulas
from bla_metric.neighbours import winoground
from bla_metric.tasks import Task, get_task, register_task, task_codes, unregister_task

TOY_TASK = Task(
    code="ng",
    config="negation",
    title="Negation",
    abbreviation="NG",
    caption_types=("TN", "TS", "FN", "FS"),
    pairs=(("TN", "FN"), ("TS", "FS"), ("TN", "TS")),
)


@pytest.fixture
def toy_task():
    register_task(TOY_TASK)
    yield TOY_TASK
    unregister_task(TOY_TASK.code)


def _write_config(rows: list[dict], root: Path, config: str) -> Path:
    folder = root / "data" / config
    folder.mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "test-00000-of-00001.parquet"))
    return root


@pytest.fixture(scope="module")
def real_rows(built_dataset: Path) -> list[dict]:
    """Eight real AP rows (images and sentences of the release)."""
    ds = load_split(str(built_dataset), "active_passive").select(range(8))
    return [dict(row) for row in ds]


def test_a_new_construction_runs_through_every_part(toy_task, real_rows, tiny_clip, tmp_path):
    rows = [
        {**row, "id": f"ng-{i:04d}", "caption_types": list(TOY_TASK.caption_types)}
        for i, row in enumerate(real_rows)
    ]
    data = _write_config(rows, tmp_path / "toy_data", "negation")
    assert get_task("negation") is toy_task and "ng" in task_codes()

    out = tmp_path / "run"
    results = evaluate(RunConfig(str(tiny_clip), out, data=str(data), tasks=("ng",)))
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert [r["task"] for r in records] == ["negation"] * 8
    scores, labels = [r["scores"] for r in records], [r["labels"] for r in records]
    metrics = results["tasks"]["negation"]
    assert metrics["ranking"] == formulas.ranking_metrics(scores, labels)
    assert set(metrics["pairwise"]) == {"TN>FN", "TS>FS", "TN>TS"}  # the registry's pairs

    report = markdown_table(results)
    assert "| model | NG |" in report and "NG n=8" in report
    table = views.metrics_table(results, "ranking")
    assert table.loc[0, "NG sent. acc"] == views.percent(metrics["ranking"]["sentence_accuracy"])
    assert "NG set acc" in views.leaderboard_columns()
    assert explore_data.task_labels()["negation"] == "Negation (NG)"
    assert [c for _, c in runner.kind_menu()][1:] == runner.space_kinds()


def test_new_constructions_paired_by_dd_partner_run_cross_task_icl():
    one = replace(TOY_TASK, dd_partner="negation_scope")
    two = replace(
        TOY_TASK,
        code="ns",
        config="negation_scope",
        title="Negation scope",
        abbreviation="NS",
        dd_partner="negation",
    )
    for task in (one, two):
        register_task(task)
    try:
        dd = get_protocol("icl-dd")
        assert partner_config("negation_learning") == "negation_scope"
        assert dd.run_tasks("bla", ["ng", "ap"], explicit=False) == ["negation_learning"]
        assert "CO <-> RC, NG <-> NS" in dd.menu_title()
        assert "negation <-> negation_scope" in dd.demonstration_rule()
        assert (dd.menu_title(), "icl-dd") in evaluate_tab.protocol_choices()
    finally:
        for task in (one, two):
            unregister_task(task.code)
    with pytest.raises(ValueError, match="runs on coordination and relative_clause only"):
        partner_config("negation_learning")


def _pair_items(data: str, task: str, split: str, limit: int | None) -> list[Item]:
    """Two images and two captions per item: caption i is true of image i (Winoground's shape)."""
    ds = load_split(data, task, split)
    items = []
    for n in range(0, len(ds) - 1, 2):
        a, b = ds[n], ds[n + 1]
        items.append(
            Item(
                benchmark="pairs",
                task=task,
                id=f"pair-{n // 2}",
                images=(
                    ImageRef(image_key(a["image"], a["image_id"]), a["image"]),
                    ImageRef(image_key(b["image"], b["image_id"]), b["image"]),
                ),
                captions=(a["captions"][0], b["captions"][0]),
                labels=((1, 0), (0, 1)),
            )
        )
    return items[:limit]


TOY_BENCHMARK = Benchmark(
    name="pairs",
    title="Two images, two captions",
    hub_id="nobody/pairs",
    task_names=lambda: ("pairs",),
    resolve_task=lambda name: name,
    read_items=_pair_items,
    summarise=lambda records, probabilistic: {
        "n": len(records),
        "scores": winoground.winoground_metrics([r["scores"] for r in records]),
    },
    views={"scores": (winoground.WINOGROUND_METRICS, "Pairs (%)")},
    headline={"scores": "group_score"},
)


@pytest.fixture
def toy_benchmark():
    register_benchmark(TOY_BENCHMARK)
    yield TOY_BENCHMARK
    unregister_benchmark(TOY_BENCHMARK.name)


def test_a_two_image_benchmark_runs_through_every_part(
    toy_benchmark, real_rows, tiny_clip, built_dataset, tmp_path
):
    data = _write_config(real_rows, tmp_path / "pairs_data", "pairs")
    out = tmp_path / "run"
    config = RunConfig(str(tiny_clip), out, benchmark="pairs", data=str(data))
    results = evaluate(config)
    assert results["benchmark"] == "pairs"
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(records) == 4
    assert all(r["labels"] == [[1, 0], [0, 1]] for r in records)
    assert all(len(r["scores"]) == 2 and len(r["scores"][0]) == 2 for r in records)
    # the matrix is the model's score of each (image, caption): the same image scored alone
    # against the same caption gives the same number
    alone = evaluate(
        config.with_(
            benchmark="bla",
            output_dir=tmp_path / "alone",
            data=str(built_dataset),
            tasks=("ap",),
            limit=1,
        )
    )
    assert alone["tasks"]["active_passive"]["n"] == 1
    single = json.loads((tmp_path / "alone" / "scores.jsonl").read_text().splitlines()[0])
    assert records[0]["scores"][0][0] == pytest.approx(single["scores"][0], abs=1e-6)

    expected = winoground.winoground_metrics([r["scores"] for r in records])
    assert results["tasks"]["pairs"]["scores"] == expected
    assert "| model | pairs |" in markdown_table(results)
    assert neighbour_tab.neighbour_menu()["pairs"] == "Two images, two captions"
    assert list(views.metrics_table(results, "scores").columns)[:3] == [
        "model",
        "source",
        "pairs text_score",
    ]


@register_kind
class WordCountScorer(Scorer):
    """A toy kind: the number of words of a sentence (no model, no image)."""

    kind = "word-count"
    help = "counts words (a toy kind of this test)"
    example = "word-count:demo"
    needs_images = False

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        return model.path.startswith("word-count:")

    def score(self, images, queries):
        return Scored([[float(len(q.sentence.split())) for q in group] for group in queries])


unregister_kind("word-count")  # registered only while a test uses it (fixture below)


@pytest.fixture
def toy_kind():
    register_kind(WordCountScorer)
    yield WordCountScorer
    unregister_kind(WordCountScorer.kind)


def test_a_new_kind_is_found_by_detection_cli_and_space(toy_kind, built_dataset, tmp_path):
    assert detect_kind("word-count:demo") == "word-count"
    args = build_parser().parse_args(["--model", "m", "--output", "o", "--kind", "word-count"])
    assert args.kind == "word-count"
    menu = runner.kind_menu()
    assert ("word-count: counts words (a toy kind of this test)", "word-count") in menu
    assert ["word-count:demo", "word-count"] in runner.kind_examples()
    results = evaluate(
        RunConfig(
            "word-count:demo", tmp_path / "run", data=str(built_dataset), tasks=("co",), limit=5
        )
    )
    assert results["kind"] == "word-count" and results["tasks"]["coordination"]["n"] == 5


def test_without_the_toy_kind_it_is_unknown():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--model", "m", "--output", "o", "--kind", "word-count"])


FIXED = (("the dog runs on the grass", "yes"), ("the cat flies over the house", "no"))
"""The two demonstrations the toy protocol shows before every target."""


def _fixed(point, partner, order, seed):
    return [FIXED for _ in point.captions]


TOY_PROTOCOL = Protocol(
    "icl-fixed",
    title="In-context, two fixed sentences",
    rule="the same two sentences before every target",
    recorder=engine_record,
    demonstrate=_fixed,
    kinds=("generative",),
    kind_error="protocol {name!r} shows demonstrations to generative models, not {kind!r}",
    resume_settings=("icl_seed",),
)

SHORT = PromptTemplate("short", "Is {sentence} true here? Answer:", source="a test")
"""A toy prompt template, asked by the toy protocol ``short-zero-shot``."""


@pytest.fixture
def toy_protocols():
    register_template(SHORT)
    register_protocol(TOY_PROTOCOL)
    register_protocol(Protocol("short-zero-shot", "Short", "none", engine_record, template="short"))
    yield
    for name in ("icl-fixed", "short-zero-shot"):
        unregister_protocol(name)
    unregister_template(SHORT.name)


@pytest.fixture(scope="module")
def tiny_generative(real_rows, tiny_model) -> Path:
    texts = [c for row in real_rows for c in row["captions"]] + [s for s, _ in FIXED]
    texts += [get_template().question, SHORT.question] * 5
    return tiny_model("blip2_generative", texts, build_blip2_generative)


@pytest.mark.usefixtures("one_thread")
def test_a_new_protocol_runs_end_to_end(
    toy_protocols, tiny_generative, tiny_clip, built_dataset, tmp_path
):
    args = ["--model", "m", "--output", "o", "--protocol", "icl-fixed"]
    assert build_parser().parse_args(args).protocol == "icl-fixed"
    assert ("In-context, two fixed sentences", "icl-fixed") in evaluate_tab.protocol_choices()
    config = RunConfig(
        str(tiny_generative),
        tmp_path / "run",
        data=str(built_dataset),
        tasks=("ap",),
        limit=2,
        device="cpu",
        protocol="icl-fixed",
        icl_seed=4,
    )
    results = evaluate(config)
    assert list(results["tasks"]) == ["active_passive_learning"]  # in context: learning split
    protocol = results["protocol"]
    assert (protocol["name"], protocol["demonstration_rule"]) == ("icl-fixed", TOY_PROTOCOL.rule)
    assert protocol["prompt_example"].startswith("Question: Is the sentence [true]")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["icl_seed"] == 4
    records = [json.loads(x) for x in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    scorer = load_scorer(
        str(tiny_generative), "generative", None, LoadOptions("cpu", protocol="icl-fixed")
    )
    item = load_bla(str(built_dataset), ("active_passive_learning",), limit=1)[0]
    queries = [Query(c, FIXED) for c in item.captions]
    expected = scorer.score([decode_image(item, item.images[0])], [queries]).scores[0]
    assert records[0]["id"] == item.id
    assert records[0]["scores"] == pytest.approx(expected, abs=1e-6)
    with pytest.raises(
        ValueError, match="shows demonstrations to generative models, not 'contrastive'"
    ):
        evaluate(config.with_(model=str(tiny_clip), output_dir=tmp_path / "clip"))


@pytest.mark.usefixtures("one_thread")
def test_a_new_prompt_template_is_what_the_model_is_asked(
    toy_protocols, tiny_generative, built_dataset, tmp_path
):
    assert get_template("short") is SHORT
    options = LoadOptions("cpu", protocol="short-zero-shot")
    scorer = load_scorer(str(tiny_generative), "generative", None, options)
    assert scorer.prompt("the man walks") == "Is the man walks true here? Answer:"
    results = evaluate(
        RunConfig(
            str(tiny_generative),
            tmp_path / "run",
            data=str(built_dataset),
            tasks=("ap",),
            limit=1,
            device="cpu",
            protocol="short-zero-shot",
        )
    )
    assert results["protocol"]["prompt"] == SHORT.question


def test_without_the_toy_protocol_and_template_they_are_unknown():
    with pytest.raises(ValueError, match="unknown protocol 'icl-fixed': use one of zero-shot"):
        get_protocol("icl-fixed")
    with pytest.raises(ValueError, match="unknown protocol 'icl-fixed'"):
        RunConfig("m", "o", protocol="icl-fixed")
    with pytest.raises(ValueError, match="unknown prompt template 'short': use one of bla, "):
        get_template("short")
