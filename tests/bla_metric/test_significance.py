"""bla_metric.significance: the paired bootstrap keeps its memory and time bounded at the
largest number of resamples allowed."""

from __future__ import annotations

import tracemalloc

import pytest


def test_a_large_allowed_bootstrap_keeps_its_memory_and_time_bounded():
    """100000 resamples (the maximum) of 600 datapoints: the resampled metrics live in
    preallocated arrays and the draws are made a block at a time."""
    import numpy as np

    from bla_metric import significance

    rng = np.random.default_rng(0)
    a, b = rng.random((600, 4)).tolist(), rng.random((600, 4)).tolist()
    labels = [[1, 1, 0, 0]] * 600
    peaks = {}
    for resamples in (10_000, 100_000):
        tracemalloc.start()
        significance.paired_bootstrap(a, b, labels, "ranking", resamples=resamples)
        peaks[resamples] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # 8 bytes per resample and metric (3 metrics, 2 runs): 4.3 MB more for 90000 resamples;
    # per-resample Python lists held about 10 times that
    assert peaks[100_000] - peaks[10_000] < 6e6
    assert peaks[100_000] < 40e6
    with pytest.raises(ValueError, match="at most 100000"):
        significance.paired_bootstrap(a, b, labels, resamples=100_001)
