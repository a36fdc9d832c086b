"""bla_metric.neighbours.pairwise: the strict rule the neighbours share."""

from __future__ import annotations

import pytest

from bla_metric.neighbours.pairwise import pairwise_accuracy

CF = [1, 0]  # caption, foil


def test_pairwise_accuracy_strict():
    assert pairwise_accuracy([[2, 1], [1, 2], [1, 1]], [CF] * 3) == pytest.approx(1 / 3)
