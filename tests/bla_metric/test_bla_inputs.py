"""Both metric entry points, ``evaluate.load("bla_metric")`` and ``formulas.compute``, accept and
refuse exactly the same inputs with the same messages (checked before evaluate's feature cast)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bla_metric.formulas import compute

REPO_ROOT = Path(__file__).resolve().parents[2]
TTFF = [1, 1, 0, 0]
SCORES = [[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4]]


@pytest.fixture(scope="module")
def module():
    import evaluate

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_EVALUATE_OFFLINE", "1")
        patch.chdir(REPO_ROOT)
        yield evaluate.load("bla_metric")


BAD = [
    # (predictions, references, kwargs, message both must raise)
    (SCORES, [[0.9, 1, 0, 0], TTFF], {}, "datapoint 0: references must be 0 or 1, got 0.9"),
    (SCORES, [TTFF, ["1", "1", "0", "0"]], {}, "datapoint 1: references must be 0/1 numbers"),
    (SCORES, [TTFF, [1, 1, None, 0]], {}, "datapoint 1: references must be 0/1 numbers"),
    ([[0.9, "0.8", 0.2, 0.1], SCORES[1]], [TTFF] * 2, {}, "datapoint 0: predictions must be"),
    ([SCORES[0], [0.3, None, 0.5, 0.4]], [TTFF] * 2, {}, "datapoint 1: predictions must be"),
    ([SCORES[0], [0.3, float("nan"), 0.5, 0.4]], [TTFF] * 2, {}, "must be finite numbers"),
    ([SCORES[0], [0.3, float("inf"), 0.5, 0.4]], [TTFF] * 2, {}, "must be finite numbers"),
    ([[0.9, 0.8, 0.2]], [TTFF], {}, "datapoint 0: predictions has 3 sentences"),
    (SCORES, [TTFF], {}, "predictions has 2 datapoints but references has 1"),
    ([], [], {}, "predictions is empty"),
    ("0.9 0.8", [TTFF], {}, "predictions must be a list"),
    (SCORES, [TTFF, [1, 1, 1, 1]], {}, "datapoint 1: references have no false"),
    (SCORES, [TTFF, [0, 0, 0, 0]], {}, "datapoint 1: references have no true"),
    ([[1, 0, 0.5, 0]] * 2, [TTFF] * 2, {"mode": "binary"}, "predictions must be 0 or 1, got 0.5"),
    (SCORES, [TTFF] * 2, {"mode": "ranked"}, "unknown mode"),
    (SCORES, [TTFF] * 2, {"threshold": 0.5}, "threshold only applies"),
    (SCORES, [TTFF] * 2, {"mode": "binary", "threshold": "high"}, "threshold must be"),
    (SCORES, [TTFF] * 2, {"bootstrap": -1}, "bootstrap must be a non-negative integer"),
    (SCORES, [TTFF] * 2, {"bootstrap": 2.5}, "bootstrap must be a non-negative integer"),
    (SCORES, [TTFF] * 2, {"groups": ["a"]}, "groups has 1 labels"),
    (SCORES, [TTFF] * 2, {"caption_types": ["TA", "TP"]}, "caption_types has 2 names"),
]


@pytest.mark.parametrize(("predictions", "references", "kwargs", "message"), BAD)
def test_both_entry_points_refuse_alike(module, predictions, references, kwargs, message):
    with pytest.raises(ValueError) as direct:
        compute(predictions, references, **kwargs)
    with pytest.raises(ValueError) as loaded:
        module.compute(predictions=predictions, references=references, **kwargs)
    assert message in str(direct.value)
    assert str(loaded.value) == str(direct.value)


GOOD = [
    (SCORES, [TTFF, [1.0, 1.0, 0.0, 0.0]], {}),
    ([[True, True, False, False], SCORES[1]], [[True, True, False, False], TTFF], {}),
    (np.array(SCORES), np.array([TTFF, TTFF]), {}),
    ([[1, 2, 3, 4], [4, 3, 2, 1]], [TTFF] * 2, {}),
    ([[1, 1, 0, 0], [0, 1, 0, 1]], [TTFF] * 2, {"mode": "binary"}),
    (SCORES, [TTFF] * 2, {"mode": "binary", "threshold": 0.5}),
    ([[0.9, 0.1], [0.2, 0.8, 0.5]], [[1, 0], [0, 1, 1]], {}),
]


@pytest.mark.parametrize(("predictions", "references", "kwargs"), GOOD)
def test_both_entry_points_accept_alike(module, predictions, references, kwargs):
    assert module.compute(predictions=predictions, references=references, **kwargs) == compute(
        predictions, references, **kwargs
    )


def test_add_batch_checks_each_batch_and_counts_datapoints(module):
    module.add_batch(predictions=SCORES, references=[TTFF] * 2)
    with pytest.raises(ValueError, match="datapoint 3: references must be 0 or 1, got 0.9"):
        module.add_batch(predictions=SCORES, references=[TTFF, [0.9, 1, 0, 0]])
    module.compute()  # clears what was added
    with pytest.raises(ValueError, match="datapoint 0: references must be 0 or 1, got 0.9"):
        module.add(prediction=SCORES[0], reference=[0.9, 1, 0, 0])
    module.add_batch(predictions=SCORES, references=[TTFF] * 2)
    assert module.compute() == compute(SCORES, [TTFF] * 2)
