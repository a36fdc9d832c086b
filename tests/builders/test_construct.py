"""The construction pipeline on hand-made Visual Genome fixtures (grammar filter off here; the
SmolLM2 grammar filter runs in test_construct_grammar.py).

``fixtures/vg/release`` annotates real release images (7 AP, 6 CO/RC) so that the released four
sentences must come out exactly; ``fixtures/vg/filters`` holds made-up images each filter drops.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from bla_metric.schema import BLA_ROWS
from builders.__main__ import main
from builders.construct.config import ConstructConfig
from builders.construct.pipeline import construct
from builders.construct.writer import write_result

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vg"
OFF = ConstructConfig(grammar_scorer="none")


@pytest.fixture(scope="session")
def runs(embedder) -> dict:
    """The pipeline on both fixture folders for all three tasks, grammar filter off."""
    return {
        (folder, task): construct(FIXTURES / folder, task, OFF, embedder=embedder, progress=False)
        for folder in ("release", "filters")
        for task in ("ap", "co", "rc")
    }


@pytest.mark.parametrize("task", ["ap", "co", "rc"])
def test_reproduces_released_sentences(runs, task, released_sets, reproduced_images):
    result = runs["release", task]
    released = released_sets(task)
    expected = reproduced_images[task]
    assert {s.image_id for s in result.sets} == expected
    for caption_set in result.sets:
        assert caption_set.captions == released[caption_set.image_id], caption_set.image_id
        assert len(result.candidates[caption_set.image_id]) == 1


def test_ap_predicate_field_is_third_person_singular(runs):
    predicates = {s.image_id: s.predicate for s in runs["release", "ap"].sets}
    assert predicates[4419] == "looks at" and predicates[2410115] == "watches"
    assert predicates[963] == "holds"  # annotated as "man held by woman": flipped to active


def test_release_fixture_step_counts(runs):
    ap = runs["release", "ap"].report.to_json()
    assert ap["images"] == {"read": 13, "kept": 7, "dropped: no candidate set": 6}
    assert ap["relationships"]["dropped: not a transitive verb"] == 1  # 411 "standing behind"
    assert ap["relationships"]["dropped: person too small"] == 1  # 675: the child is 0.06 %
    assert ap["relationships"]["dropped: predicate is not a verb"] == 1  # 4419 "near"
    co = runs["release", "co"].report.to_json()
    assert co["relationships"]["dropped: reasoning language (positional word)"] == 2
    assert co["relationships"]["dropped: reasoning language (number)"] == 1  # "two bags"
    assert co["relationships"]["dropped: body part"] == 1  # "has hand"
    assert co["attributes"]["dropped: duplicate attribute (same string)"] == 1  # 2nd yellow shirt
    assert co["attributes"]["dropped: duplicate attribute (similar last word)"] == 1  # t-shirt
    assert co["sets"] == {"built": 6, "kept": 6}
    assert runs["release", "rc"].report.to_json()["person pairs"] == {"kept": 6}


def test_each_filter_drops_what_it_should(runs):
    ap = runs["filters", "ap"].report.to_json()["relationships"]
    assert ap["dropped: not a transitive verb"] == 1  # "walking with"
    assert ap["dropped: subject is not a person"] == 1  # the ball
    assert ap["dropped: person too small"] == 1  # the boy of 0.08 %
    assert ap["dropped: same noun and no distinguishing attribute"] == 1  # smiling man x2
    co = runs["filters", "co"].report.to_json()
    assert co["person pairs"]["dropped: boxes overlap (same person)"] == 1
    assert co["persons"]["dropped: person too small"] == 1
    assert co["relationships"]["dropped: object too small"] == 1  # the ring, 0.01 %
    assert runs["filters", "ap"].sets == []
    for task in ("co", "rc"):  # only 9000004, built to have several candidate sets
        assert [s.image_id for s in runs["filters", task].sets] == [9000004]
        assert len(runs["filters", task].candidates[9000004]) == 3
        report = runs["filters", task].report
        assert report.get("sets", "dropped: over the maximum sets per image") == 6


def test_thresholds_come_from_the_config(reproduced_images):
    strict = ConstructConfig(grammar_scorer="none", min_person_area=0.03)
    result = construct(FIXTURES / "release", "ap", strict, progress=False)
    assert result.report.to_json()["relationships"]["dropped: person too small"] == 2
    # image 675's men cover ~2 % each
    assert {s.image_id for s in result.sets} == reproduced_images["ap"] - {675}


def test_output_loads_like_the_release_configs(runs, tmp_path, release_dir, reproduced_images):
    out = tmp_path / "built"
    write_result(runs["release", "co"], "co", out, release_dir / "images", OFF.to_json())
    loaded = datasets.load_dataset(str(out), split="test")
    assert loaded.features == BLA_ROWS.features()
    assert len(loaded) == len(reproduced_images["co"])
    row = loaded[0]
    assert row["id"] == "co-0000" and row["labels"] == [1, 1, 0, 0]
    assert row["caption_types"] == ["TP1", "TP2", "FP1", "FP2"]
    assert row["image"].size[0] > 0 and row["grammar_scores"] is None
    report = json.loads((out / "construct_report.json").read_text())
    assert report["steps"]["sets"]["kept"] == len(reproduced_images["co"])


def test_cli_writes_dataset_without_images_and_replaces_a_previous_build(tmp_path, capsys):
    out = tmp_path / "ap"
    argv = [
        "construct",
        "--vg",
        str(FIXTURES / "release"),
        "--task",
        "ap",
        "--out",
        str(out),
        "--grammar-scorer",
        "none",
    ]
    assert main(argv) == 0
    assert main(argv) == 0  # a previous build is replaced, not refused
    printed = capsys.readouterr().out
    assert "relationships" in printed and '"active_passive": {"test": 7}' in printed
    loaded = datasets.load_dataset(str(out), split="test")
    assert loaded["image"] == [None] * 7  # no --images: the image column is null
    assert loaded[0]["predicate"] == "watches"


def test_unknown_task_and_missing_vg_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown task 'xx'"):
        construct(FIXTURES / "release", "xx", OFF)
    with pytest.raises(ValueError, match="no image_data.json"):
        construct(tmp_path, "ap", OFF, progress=False)
