"""bla_metric.stats.significance: the paired bootstrap keeps its memory and time bounded at the
largest number of resamples allowed."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from bla_metric.stats import significance


def test_a_large_allowed_bootstrap_keeps_its_memory_and_time_bounded():
    """100000 resamples (the maximum) of 600 datapoints: the resampled metrics live in
    preallocated arrays and the draws are made a block at a time."""
    import numpy as np

    from bla_metric.stats import significance

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


def test_the_sign_flip_test_is_exact_where_the_bootstrap_is_not() -> None:
    import numpy as np
    from scipy import stats

    from bla_metric.stats import significance

    one = significance.sign_flip([0.5])
    assert one["p_value"] == 1.0 and one["exact"]  # the bootstrap p here is 1 / (B + 1)
    assert significance.sign_flip([0.25, 0.25, 0.25])["p_value"] == 0.25
    x = np.random.default_rng(1).normal(0.5, 1, 10)
    exact = stats.permutation_test(
        (x,), np.sum, permutation_type="samples", n_resamples=10**6
    ).pvalue
    assert significance.sign_flip(x)["p_value"] == pytest.approx(exact)
    many = significance.sign_flip(np.random.default_rng(2).normal(0, 1, 40), draws=4000)
    assert not many["exact"] and 0 < many["p_value"] <= 1


def test_a_difference_without_variation_is_flagged() -> None:
    """n = 8, every datapoint tied in A (sentence accuracy 0.5) and right in B (1.0): the
    bootstrap gives -50 [-50, -50] with p = 1 / (B + 1); ``variation`` says it means nothing."""
    tied, right = [[0.5] * 4] * 8, [[1.0, 0.9, 0.1, 0.0]] * 8
    result = significance.paired_bootstrap(tied, right, [[1, 1, 0, 0]] * 8, resamples=200)
    sentence = result["sentence_accuracy"]
    assert sentence["difference"] == -0.5 and sentence["variation"] is False
    assert significance.varies([0.1, 0.2]) and not significance.varies([0.3] * 5)
    rng = np.random.default_rng(0)
    varied = significance.paired_bootstrap(
        rng.random((40, 4)).tolist(),
        rng.random((40, 4)).tolist(),
        [[1, 1, 0, 0]] * 40,
        resamples=200,
    )
    assert varied["sentence_accuracy"]["variation"] is True
