"""The authors' answer rules and statistics (bla_metric.answers, bla_metric.paper), and the
registry of published numbers (bla_metric.published) behind the reference rows."""

from __future__ import annotations

import pytest

from bla_metric import formulas, paper, published, references
from bla_metric.answers import normalise_answer, parse_answer
from bla_metric.tasks import task_configs

ANSWER_TABLE = [
    ("yes.", "yes"),
    ("No", "no"),
    ("it is not", "no"),
    ("nothing", "no"),
    ("appropriate", "yes"),
    ("I don't know", "no"),
    ("", None),
    ("  Yes  ", "yes"),
    ("not appropriate", "yes"),  # "appropriate" is tested first
    ("yes and no", "yes"),
    ("maybe", None),
    ("the man.", None),
]


def authors_classify(text: str) -> str | None:
    """The authors' script, line for line (an empty answer makes their ``result[-1]`` fail:
    here it is unparsed)."""
    result = text.strip().lower()
    if result and result[-1] == ".":
        result = result[:-1]
    if "appropriate" in result:
        result = "yes"
    if "yes" in result:
        return "yes"
    if "no" in result:
        return "no"
    return None


@pytest.mark.parametrize(("text", "expected"), ANSWER_TABLE)
def test_answers_are_classified_as_the_authors_script_does(text, expected):
    assert parse_answer(text) == expected == authors_classify(text)


def test_normalise_strips_lowers_and_drops_one_full_stop():
    assert normalise_answer("  Yes.. ") == "yes."


def authors_cls_statistics(tp: int, fp: int, tn: int, fn: int) -> dict[str, float]:
    """bla_utils.get_cls_statistics of the authors' repository (before rounding)."""
    return {
        "accuracy": (tp + tn) / (tp + fp + tn + fn),
        "precision_true": tp / (tp + fp),
        "recall_true": tp / (tp + fn),
        "precision_false": tn / (tn + fn),
        "recall_false": tn / (fp + tn),
    }


def test_unparsed_answers_are_excluded_and_counted():
    answers = [
        ["yes.", "No", "nothing", ""],  # TP, FN, TN, unparsed
        ["appropriate", "maybe", "yes", "I don't know"],  # TP, unparsed, FP, TN
        ["no", "no", "no", "no"],  # FN, FN, TN, TN: all the same
    ]
    labels = [[1, 1, 0, 0]] * 3
    metrics = paper.paper_metrics(answers, labels)
    expected = authors_cls_statistics(tp=2, fp=1, tn=4, fn=3)
    assert {k: metrics[k] for k in expected} == pytest.approx(expected)
    assert (metrics["parsed"], metrics["unparsed"], metrics["n"]) == (10, 2, 3)
    assert metrics["all_same_rate"] == pytest.approx(1 / 3)
    # the same counts as the binary view of bla_metric.formulas over the parsed sentences only
    flat = formulas.binary_metrics(
        [[1, 0, 0], [1, 1, 0], [0, 0, 0, 0]], [[1, 1, 0], [1, 0, 0], [1, 1, 0, 0]]
    )
    assert metrics["accuracy"] == flat["accuracy"]
    assert metrics["precision_true"] == flat["precision_true"]


def test_paper_metrics_bootstrap_is_seeded_and_brackets_the_value():
    answers = [["yes", "no", "no", "yes"], ["yes", "yes", "no", "no"]] * 20
    labels = [[1, 1, 0, 0]] * 40
    a = paper.paper_metrics(answers, labels, bootstrap=200, seed=1)
    assert a["ci"] == paper.paper_metrics(answers, labels, bootstrap=200, seed=1)["ci"]
    low, high = a["ci"]["accuracy"]
    assert low <= a["accuracy"] <= high


def test_paper_metrics_name_misaligned_inputs():
    with pytest.raises(ValueError, match="datapoint 1: 3 answers for 4 labels"):
        paper.paper_metrics([["yes"] * 4, ["yes"] * 3], [[1, 1, 0, 0]] * 2)


# ----------------------------------------------------------------------------- the registry


def test_every_published_number_is_machine_checkable():
    assert published.PUBLISHED
    for number in published.PUBLISHED:
        setup = published.SETUPS[number.setup]
        record = number.as_dict()
        assert record["model"] == setup.model and record["hub_ids"] == list(setup.hub_ids)
        assert number.task in task_configs() and number.view in ("binary", "ranking")
        assert 0 < number.tolerance <= 0.05 and number.justification
        low = -1 if setup.baseline else 0
        assert low <= number.value <= 1
        assert number.source.startswith(("paper", "thesis"))
        if setup.runnable:
            assert setup.hub_ids, setup.name
        else:
            assert setup.reason, setup.name
    keys = [(n.setup, n.source, n.task, n.metric, n.condition) for n in published.PUBLISHED]
    assert len(keys) == len(set(keys))


def test_registry_knows_the_hub_ids_and_what_cannot_run():
    assert published.find_setup("clip").hub_ids == ("openai/clip-vit-base-patch32",)
    assert published.find_setup("BLIP2").hub_ids == ("Salesforce/blip2-flan-t5-xxl",)
    assert published.find_setup("blip2").protocol == "paper"
    assert published.find_setup("blip2-icl-sd").protocol == "paper-icl-sd"
    assert published.find_setup("gpt2").name == "GPT-2"
    for name in ("ViLBERT", "LXMERT", "Humans"):
        assert not published.find_setup(name).runnable
    assert published.find_setup("OpenFlamingo").kind == "flamingo"
    with pytest.raises(ValueError, match="unknown published row 'blip3'"):
        published.find_setup("blip3")
    assert [s.name for s in published.setups_of("gpt2")] == ["GPT-2"]


def test_reference_rows_are_derived_from_the_registry():
    zero_shot = [n for n in published.PUBLISHED if published.SETUPS[n.setup].baseline is None]
    cells = {
        (row["model"], row["protocol"], row["task"], key): value
        for row in references.REFERENCE_ROWS
        for key, value in row.items()
        if key not in ("model", "source", "protocol", "task")
    }
    assert cells == {
        (published.SETUPS[n.setup].model, n.view, n.task, n.metric): n.value for n in zero_shot
    }
    blip2 = published.numbers_of("BLIP2 ICL-DD")
    assert [(n.task, n.value, n.condition) for n in blip2] == [
        ("relative_clause", 0.1125, "learned on coordination"),
        ("coordination", 0.0694, "learned on relative_clause"),
    ]
