"""The scoring loop's calls of a model: transformers' cache-rename notice silenced around the
engine's own calls only."""

from __future__ import annotations

import logging
import warnings

import pytest
from bla_eval.benchmarks.bla import load_bla
from bla_eval.scorers import LoadOptions, load_scorer
from bla_eval.scoring import CACHE_RENAME_LOGGERS, score_items

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_cache_rename_notice_is_silenced_only_around_the_engines_calls(
    tiny_llava, built_dataset, caplog
):
    """A generative run passes the prompt's cache to the model: no ``past_key_values is
    deprecated`` warning reaches the user, and after the run the same warning is shown again
    (the filter was never global)."""
    items = load_bla(str(built_dataset), ["co"], limit=2)
    scorer = load_scorer(str(tiny_llava), "generative", 4, LoadOptions(device="cpu"))
    seen: list = []
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        score_items(scorer, items, lambda item, *_: seen.append(item), images_per_batch=2)
    assert len(seen) == 2
    shown = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [m for m in shown if "past_key_values" in m], shown
    with pytest.warns(FutureWarning, match="past_key_values"):
        warnings.warn("`past_key_values` is deprecated", FutureWarning, stacklevel=1)
    assert all(not logging.getLogger(name).filters for name in CACHE_RENAME_LOGGERS)
