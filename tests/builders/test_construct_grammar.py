"""The grammar filter with the real default scorer (SmolLM2-135M SLOR, calibrated threshold).

The model loads once per session (~20-30 s on 2 CPUs); the fixtures yield ~100 sentences.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from builders.construct.config import ConstructConfig
from builders.construct.grammar import make_scorer
from builders.construct.pipeline import construct

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vg"
CONFIG = ConstructConfig()


@pytest.fixture(scope="session")
def scorer():
    return make_scorer(CONFIG)


@pytest.fixture(scope="session")
def graded(scorer, embedder) -> dict:
    return {
        (folder, task): construct(
            FIXTURES / folder, task, CONFIG, scorer=scorer, embedder=embedder, progress=False
        )
        for folder in ("release", "filters")
        for task in ("ap", "co", "rc")
    }


def test_scorer_prefers_grammatical_sentences(scorer):
    good, scrambled = scorer.score(["the woman watches the man", "the man the watches woman by"])
    assert good > CONFIG.threshold("ap") >= scrambled


@pytest.mark.parametrize("task", ["ap", "co", "rc"])
def test_released_sets_pass_the_grammar_filter(graded, task, released_sets, reproduced_images):
    result = graded["release", task]
    released = released_sets(task)
    assert {s.image_id for s in result.sets} == reproduced_images[task]
    for caption_set in result.sets:
        assert caption_set.captions == released[caption_set.image_id]
        assert min(caption_set.scores) > CONFIG.threshold(task)
    assert result.scorer_name.startswith("lm-slor:SmolLM2-135M")


@pytest.mark.parametrize("task", ["co", "rc"])
def test_best_scored_set_is_kept(graded, task):
    result = graded["filters", task]
    candidates = result.candidates[9000004]
    assert len(candidates) == 3 and all(len(c.scores) == 4 for c in candidates)
    passing = [c for c in candidates if min(c.scores) > CONFIG.threshold(task)]
    kept = [s for s in result.sets if s.image_id == 9000004]
    if passing:
        assert kept == [max(passing, key=lambda c: c.mean_score)]
    else:
        assert kept == []
    failed = result.report.get("sets", "dropped: a sentence scores <= grammar threshold")
    assert failed == len(candidates) - len(passing)


def test_grammar_filter_uses_the_engine_log_probability_helper(scorer):
    """One sentence log-probability for the grammar filter and the engine's text kind."""
    from bla_eval.language_model import mean_log_probs, token_log_probs

    sentences = ["the woman watches the man", "the man who is wearing a hat"]
    slor = mean_log_probs(
        scorer.model, scorer.tokenizer, sentences, scorer.bos, scorer.device, scorer.unigram
    )
    assert scorer.score(sentences, progress=False) == slor
    token_lp, targets, valid = token_log_probs(
        scorer.model, scorer.tokenizer, sentences, scorer.bos, scorer.device
    )
    assert token_lp.shape == targets.shape == valid.shape
    plain = mean_log_probs(scorer.model, scorer.tokenizer, sentences, scorer.bos, scorer.device)
    assert plain == ((token_lp * valid).sum(1) / valid.sum(1)).tolist()
