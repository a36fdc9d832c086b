"""The `bla` evaluate module: offline loading, kwargs, docstring and card examples, the card's
numbers against references.py, the Space widget and the benchmark script."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
import yaml

from bla_metric import bla, references
from bla_metric.formulas import BINARY_METRICS, RANKING_METRICS, compute
from bla_metric.tasks import task_configs

REPO_ROOT = Path(__file__).resolve().parents[2]
METRIC_DIR = REPO_ROOT / "bla_metric"
CARD = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
TTFF = [1, 1, 0, 0]
AP = ["TA", "TP", "FA", "FP"]
SCORES = [[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4]]


@pytest.fixture(scope="module")
def offline():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_EVALUATE_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def module(offline):
    import evaluate

    return evaluate.load(str(METRIC_DIR / "bla.py"))


# ----------------------------------------------------------------------------- evaluate.load


def test_load_script_offline_matches_formulas(module):
    assert module.name == "bla"
    kwargs = {"caption_types": AP, "groups": ["a", "b", "a", "b"], "bootstrap": 50, "seed": 1}
    result = module.compute(predictions=SCORES, references=[TTFF] * 4, **kwargs)
    assert result == compute(SCORES, [TTFF] * 4, **kwargs)
    assert result["set_accuracy"] == 0.25
    assert result["set_error"] == 0.25


def test_load_folder_offline(offline, monkeypatch):
    import evaluate

    monkeypatch.chdir(REPO_ROOT)
    folder = evaluate.load("bla_metric")
    result = folder.compute(predictions=SCORES, references=[TTFF] * 4)
    assert result == compute(SCORES, [TTFF] * 4)


def test_module_binary_and_ragged_inputs(module):
    binary = module.compute(
        predictions=SCORES, references=[TTFF] * 4, mode="binary", threshold="top_k"
    )
    assert binary == compute(SCORES, [TTFF] * 4, mode="binary", threshold="top_k")
    ragged = module.compute(
        predictions=[[0.9, 0.1], [0.2, 0.8, 0.5]], references=[[1, 0], [0, 1, 1]]
    )
    assert ragged == {"sentence_accuracy": 1.0, "set_accuracy": 1.0, "set_error": 0.0, "n": 2}


def test_module_add_batch(module):
    for scores in SCORES:
        module.add(predictions=scores, references=TTFF)
    assert module.compute() == compute(SCORES, [TTFF] * 4)


def test_module_errors_name_the_datapoint(module):
    with pytest.raises(ValueError, match="datapoint 1: references have no false"):
        module.compute(predictions=SCORES[:2], references=[TTFF, [1, 1, 1, 1]])
    with pytest.raises(ValueError, match="unknown mode"):
        module.compute(predictions=SCORES[:1], references=[TTFF], mode="ranked")


def test_kwargs_description_examples_run(offline, monkeypatch):
    import evaluate

    monkeypatch.chdir(REPO_ROOT)
    test = doctest.DocTestParser().get_doctest(
        bla._KWARGS_DESCRIPTION, {"evaluate": evaluate}, "bla._KWARGS_DESCRIPTION", None, 0
    )
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_card_examples_run(module):
    blocks = [b for b in re.findall(r"```python\n(.*?)```", CARD, flags=re.S) if ">>>" in b]
    assert len(blocks) == 2
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        runner.run(doctest.DocTestParser().get_doctest(block, {"bla": module}, f"card{i}", None, 0))
    assert runner.summarize(verbose=False).failed == 0


# ----------------------------------------------------------------------------- module card


def test_card_header_is_a_space_and_metric_card():
    header = yaml.safe_load(CARD.split("---")[1])
    assert header["sdk"] == "gradio"
    assert header["app_file"] == "app.py" and (METRIC_DIR / header["app_file"]).is_file()
    assert {"evaluate", "metric"} <= set(header["tags"])
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk_version", "description"):
        assert header[key], key
    assert header["pinned"] is False
    for section in ("## Metric Description", "### Inputs", "### Output Values", "## Citation"):
        assert section in CARD
    assert "## Limitations and Bias" in CARD
    assert "chen-etal-2023-bla" in CARD and "Pezzelle, Sandro" in CARD


def _card_table(caption: str) -> dict[str, list[str]]:
    """{first cell: other cells} of the first Markdown table after ``caption`` in the card."""
    start = CARD.index(caption)
    lines = CARD[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = {}
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _reference(model: str, source: str, task: str) -> dict:
    (row,) = [
        r
        for r in references.REFERENCE_ROWS
        if r["model"] == model and r["task"] == task and r["source"].startswith(source)
    ]
    return row


@pytest.mark.parametrize(
    ("caption", "source", "keys", "models"),
    [
        (
            "Paper Table 2 (zero-shot",
            references.PAPER_TABLE2,
            ("accuracy", "precision_true", "precision_false"),
            ["ViLBERT", "LXMERT", "CLIP", "BLIP2", "OpenFlamingo", "Humans"],
        ),
        (
            "Paper §5.3, `all_same_rate`",
            references.PAPER_TABLE2,
            ("all_same_rate",),
            ["BLIP2", "ViLBERT", "OpenFlamingo", "LXMERT"],
        ),
        (
            "Thesis Table 6.3 (ranking",
            "thesis",
            ("sentence_accuracy", "set_accuracy", "set_error"),
            ["CLIP", "ViLBERT", "LXMERT", "GPT-2", "Experts"],
        ),
    ],
)
def test_card_numbers_match_references(caption, source, keys, models):
    table = _card_table(caption)
    assert list(table) == models
    for model, cells in table.items():
        for task, cell in zip(task_configs(), cells, strict=True):
            printed = [float(value) for value in cell.split(" / ")]
            row = _reference(model, source, task)
            assert printed == pytest.approx([row[key] * 100 for key in keys], abs=1e-9), model


def test_card_gpt2_appendix_and_chance_levels():
    tasks = task_configs()
    gpt2 = [_reference("GPT-2", references.PAPER_APPENDIX_H, t)["accuracy"] for t in tasks]
    assert "accuracy " + " / ".join(f"{v * 100:.2f}" for v in gpt2) in CARD
    chance = _card_table("#### Chance levels")
    assert chance["sentence_accuracy"] == ["0.5"]
    assert chance["set_accuracy"][0].startswith("1/6")
    assert references.CHANCE["set_accuracy"] == pytest.approx(1 / 6)
    assert chance["all_same_rate"][0].startswith(str(references.CHANCE["all_same_rate"]))
    assert chance["pairwise (every pair)"] == [str(references.CHANCE["pairwise"])]


# ----------------------------------------------------------------------------- references.py


def test_reference_rows_shape():
    metrics = set(RANKING_METRICS) | set(BINARY_METRICS)
    assert set(references.CHANCE) == metrics | {"pairwise"}
    for row in references.REFERENCE_ROWS:
        assert {"model", "source", "protocol", "task"} <= set(row)
        assert row["task"] in task_configs()
        assert row["protocol"] in ("binary", "ranking")
        values = {key: value for key, value in row.items() if key in metrics}
        assert values and set(row) - set(values) == {"model", "source", "protocol", "task"}
        assert all(0 <= value <= 1 for value in values.values())
        view = RANKING_METRICS if row["protocol"] == "ranking" else BINARY_METRICS
        assert set(values) <= set(view)
    table2 = references.reference_rows(protocol="binary")
    assert {r["model"] for r in table2 if r["source"].startswith(references.PAPER_TABLE2)} == {
        "ViLBERT",
        "LXMERT",
        "CLIP",
        "BLIP2",
        "OpenFlamingo",
        "Humans",
    }
    assert len(references.reference_rows(task="coordination")) == len(references.REFERENCE_ROWS) / 3
    with pytest.raises(ValueError, match="unknown task"):
        references.reference_rows(task="ap")


def test_thesis_rows_satisfy_the_identity():
    """0.5 + (set_accuracy - set_error) / 2 = sentence_accuracy, up to the printed rounding."""
    for row in references.reference_rows(protocol="ranking"):
        if row["source"] == references.THESIS_TABLE63:
            identity = 0.5 + (row["set_accuracy"] - row["set_error"]) / 2
            assert row["sentence_accuracy"] == pytest.approx(identity, abs=1e-4), row


def test_blip2_binary_numbers_in_references():
    ap = _reference("BLIP2", references.PAPER_TABLE2, "active_passive")
    assert ap["accuracy"] == 0.6415 and ap["all_same_rate"] == 0.5465


# ------------------------------------------------------------------ Space widget, benchmark


def test_app_widget_computes_and_reports_errors(module):
    import gradio as gr

    from bla_metric import app

    demo = app.build_demo(module)
    assert isinstance(demo, gr.Interface)
    run = app.make_runner(module)
    result = run(app.EXAMPLE_PREDICTIONS, app.EXAMPLE_REFERENCES, app.EXAMPLE_OPTIONS)
    assert result["n"] == 3 and set(result["pairwise"]) >= {"TA>FA", "TP>FP"}
    assert result["ci"]["set_accuracy"][0] <= result["set_accuracy"]
    with pytest.raises(gr.Error, match="datapoint 0"):
        run("[[1, 2]]", "[[1, 1]]", "")
    assert "Metric Card for BLA" in app.card_body()


def test_metric_speed_script_prints_every_case(capsys):
    from bla_eval.performance import metric

    metric.main(["--n", "1000", "--repeats", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(metric.CASES)
    assert all("1,000 datapoints" in line and line.endswith(" s") for line in lines)
