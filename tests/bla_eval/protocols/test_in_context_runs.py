"""bla-eval --protocol icl-sd|icl-dd with tiny generative models (plain prompt and chat template)
on the real learning test splits: the prompts the scorer sends, the protocol record, DD skips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bla_eval.benchmarks.bla import load_bla
from bla_eval.cli import main as bla_eval
from bla_eval.protocols import get_protocol, get_template
from bla_eval.scorers import LoadOptions, Query, load_scorer
from bla_eval.testing.generative import build_blip2_generative, build_llava_chat

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def generative(built_dataset: Path, tiny_model) -> dict[str, Path]:
    items = load_bla(
        str(built_dataset),
        ("coordination_learning", "relative_clause_learning", "active_passive_learning"),
    )
    texts = [c for i in items for c in i.captions] + [
        get_template().question.format(sentence="x")
    ] * 5
    return {
        "blip2": tiny_model("blip2_generative", texts, build_blip2_generative),
        "llava": tiny_model("llava_chat", texts, build_llava_chat),
    }


def run(model: Path, data: Path, out: Path, *extra: str) -> dict:
    argv = ["--model", str(model), "--output", str(out), "--data", str(data), "--device", "cpu"]
    assert bla_eval([*argv, "--limit", "2", *extra]) == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_icl_sd_runs_on_the_learning_test_splits(generative, built_dataset, tmp_path):
    results = run(generative["blip2"], built_dataset, tmp_path / "sd", "--protocol", "icl-sd")
    assert list(results["tasks"]) == [
        "active_passive_learning",
        "coordination_learning",
        "relative_clause_learning",
    ]
    protocol = results["protocol"]
    assert protocol["name"] == "icl-sd"
    assert protocol["template"] == get_template().question
    assert protocol["order"] == "true-first"
    assert protocol["demonstration_rule"] == get_protocol("icl-sd").rule
    assert protocol["prompt_example"] == (
        "Question: Is the sentence [true] appropriate for this image? yes or no? Answer: yes. "
        "Question: Is the sentence [false] appropriate for this image? yes or no? Answer: no. "
        "Question: Is the sentence [target] appropriate for this image? yes or no? Answer:"
    )
    records = [json.loads(x) for x in (tmp_path / "sd" / "scores.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records if r["task"] == "active_passive_learning"] == [
        "ap-0346",
        "ap-0383",
    ]
    assert all(0 <= s <= 1 for r in records for s in r["scores"])


def test_icl_dd_skips_and_reports_datapoints_without_partner(generative, built_dataset, tmp_path):
    out = tmp_path / "dd"
    argv = ["--model", str(generative["llava"]), "--output", str(out), "--device", "cpu"]
    argv += ["--data", str(built_dataset), "--protocol", "icl-dd", "--icl-order", "shuffled"]
    assert bla_eval([*argv, "--icl-seed", "7", "--tasks", "rc", "--limit", "20"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    protocol = results["protocol"]
    assert (protocol["name"], protocol["order"], protocol["seed"]) == ("icl-dd", "shuffled", 7)
    assert protocol["chat_template"] is True
    assert protocol["demonstration_format"].startswith("chat turns")
    # the 17th of the first 20 RC test images (rc-0493) is not in coordination
    skipped = protocol["without_partner"]["relative_clause_learning"]
    assert skipped == {"count": 1, "ids": ["rc-0493"]}
    assert results["tasks"]["relative_clause_learning"]["n"] == 19
    assert protocol["partner_configs"] == {"relative_clause_learning": "coordination"}


def test_zero_shot_on_a_learning_config_scores_the_same_datapoints(
    generative, built_dataset, tmp_path
):
    results = run(
        generative["blip2"], built_dataset, tmp_path / "zs", "--tasks", "coordination_learning"
    )
    assert results["protocol"]["name"] == "zero-shot"
    assert list(results["tasks"]) == ["coordination_learning"]


def test_the_scorer_sends_the_protocol_prompt(generative, built_dataset):
    item = load_bla(str(built_dataset), ("coordination_learning",), limit=1)[0]
    demos = get_protocol("icl-sd").demonstrations_for(item)[0]
    query = Query(item.captions[0], demos)
    options = LoadOptions(device="cpu")
    plain = load_scorer(str(generative["blip2"]), None, 4, options)
    assert plain.prompt(query).endswith(get_template().plain(query.sentence, query.demonstrations))
    chat = load_scorer(str(generative["llava"]), None, 4, options)
    text = chat.prompt(query)
    assert text.count("<image>") == 1 and text.count("<|assistant|>") == 3
    assert text.index(demos[0][0]) < text.index(demos[1][0]) < text.rindex(item.captions[0])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--protocol", "icl-dd", "--tasks", "ap"], "icl-dd has no partner construction"),
        (["--protocol", "icl-sd", "--kind", "contrastive"], "needs a generative model"),
    ],
)
def test_bad_protocol_use_is_a_one_line_error(
    generative, built_dataset, tmp_path, capsys, extra, message
):
    argv = ["--model", str(generative["blip2"]), "--output", str(tmp_path / "o")]
    assert bla_eval([*argv, "--data", str(built_dataset), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_learning_report_compares_each_protocol_with_zero_shot_on_the_same_datapoints(
    generative, built_dataset, tmp_path, capsys
):
    model, data = generative["blip2"], built_dataset
    tasks = ["--tasks", "coordination_learning,relative_clause_learning"]
    zero = run(model, data, tmp_path / "zs", *tasks, "--limit", "10")
    sd = run(model, data, tmp_path / "sd", "--protocol", "icl-sd", *tasks, "--limit", "10")
    run(model, data, tmp_path / "dd", "--protocol", "icl-dd", *tasks, "--limit", "10")
    capsys.readouterr()
    runs = [str(tmp_path / name) for name in ("zs", "sd", "dd")]
    assert bla_eval(["learning-report", *runs, "--output", str(tmp_path / "report")]) == 0
    text = capsys.readouterr().out
    assert "| BLIP2 (paper Table 3) | ICL | precision_false | +18.74 | +42.34 | +46.50 |" in text
    assert "| BLIP2 (paper Table 4) | ICL | CO | all | – | – | +11.25 |" in text
    doc = json.loads((tmp_path / "report" / "learning_report.json").read_text(encoding="utf-8"))
    rows = {(r["setting"], r["tested_on"]): r for r in doc["rows"]}
    for code, config in (("co", "coordination_learning"), ("rc", "relative_clause_learning")):
        row = rows[("SD", code)]  # same 10 datapoints: the results' own metrics
        for metric in ("accuracy", "precision_true", "precision_false"):
            learned = sd["tasks"][config]["binary"][metric]
            before = zero["tasks"][config]["binary"][metric]
            assert row["improvement"][metric] == pytest.approx(100 * (learned - before))
    dd = rows[("DD", "rc")]  # RC tested with CO demonstrations (the first 10 all have a partner)
    assert (dd["learned_on"], dd["n"]) == ("co", 10)
    assert rows[("DD", "co")]["n"] == 9  # the 6th CO test image (co-0439) is not in RC
    assert (tmp_path / "report" / "figure3_accuracy.png").stat().st_size > 10_000
    assert bla_eval(["learning-report", str(tmp_path / "nothing")]) == 2
    assert "is neither a bla-eval run" in capsys.readouterr().err


def test_space_runs_icl_and_keeps_protocols_apart_on_the_leaderboard(
    generative, built_dataset, tmp_path
):
    from bla_space import views
    from bla_space.config import SpaceConfig
    from bla_space.runner import EvaluationRequest, run_evaluation

    config = SpaceConfig(dataset=str(built_dataset), results_dir=tmp_path / "runs", device="cpu")
    model = str(generative["blip2"])
    zero = run_evaluation(
        config, EvaluationRequest(model, "generative", ["coordination_learning"], 3)
    )
    icl = run_evaluation(
        config, EvaluationRequest(model, "generative", ["co", "ap"], 3, protocol="icl-dd")
    )
    assert list(icl.results["tasks"]) == ["coordination_learning"]  # AP has no DD partner
    assert icl.results["protocol"]["name"] == "icl-dd"
    labels = {views.protocol_label(r.results) for r in (zero, icl)}
    assert labels == {"zero-shot, threshold 0.5", "icl-dd, threshold 0.5"}
    table = views.leaderboard_table([zero.results, icl.results], "binary")
    shown = views.display_name(zero.results)  # the folder's name: the Space shows no path
    assert shown != model and set(table[table["model"] == shown]["protocol"]) == labels
    with pytest.raises(ValueError, match="ICL DD runs on coordination and relative clauses"):
        run_evaluation(config, EvaluationRequest(model, "generative", ["ap"], 3, protocol="icl-dd"))
