"""Rank sets by cluster: permutations of the models within clusters of datapoints."""

from __future__ import annotations

import numpy as np
import pytest

from bla_metric.stats import cluster_ranks, ranks


def _clustered(rng: np.random.Generator, models: int, sizes: list[int], icc: float) -> tuple:
    """Equal models whose success depends on the cluster (model x cluster effect): (values
    (models, n) in {0, 1}, cluster labels)."""
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    effect = rng.standard_normal((models, len(sizes)))[:, cluster]
    latent = np.sqrt(icc) * effect + np.sqrt(1 - icc) * rng.standard_normal(effect.shape)
    return (latent < 0.5).astype(float), cluster


def test_the_statistic_is_statsmodels_cluster_robust_t() -> None:
    """[j, k] is the t of the mean difference with statsmodels' cluster-robust standard error
    (OLS on a constant, cov_type "cluster", its default small-sample correction)."""
    from statsmodels.regression.linear_model import OLS

    rng = np.random.default_rng(3)
    values, cluster = _clustered(rng, 3, [30, 9, 5, 4, 3, 2, 1, 1], 0.3)
    t_obs, null = cluster_ranks.cluster_permutation_statistics(values, cluster, 50, 0)
    assert null.shape == (3, 3, 51) and np.array_equal(null[:, :, 0], t_obs)
    d = values[0] - values[2]
    fit = OLS(d, np.ones((len(d), 1))).fit(cov_type="cluster", cov_kwds={"groups": cluster})
    assert t_obs[0, 2] == pytest.approx(fit.tvalues[0], rel=1e-9)
    assert t_obs[2, 0] == pytest.approx(-fit.tvalues[0], rel=1e-9)


def test_equal_clustered_models_keep_their_coverage_where_datapoint_permutations_do_not() -> None:
    """Three equal models, 12 clusters of very unequal sizes, strong cluster effects: the sets
    from permutations within clusters hold all true ranks (1) in at least 88% of 60 simulated
    benchmarks; permutations within datapoints, which ignore the clusters, fall far below."""
    rng = np.random.default_rng(11)
    sizes = [60, 20, 10, 6, 4, 3, 2, 2, 1, 1, 1, 1]
    by_cluster = by_datapoint = 0
    for sim in range(60):
        values, cluster = _clustered(rng, 3, sizes, 0.4)
        t_obs, null = cluster_ranks.cluster_permutation_statistics(values, cluster, 200, sim)
        by_cluster += bool((ranks._sets(t_obs, null, 0.05, "simultaneous")[:, 0] == 1).all())
        plain = ranks.permutation_rank_sets(values, 200, sim)
        by_datapoint += bool((plain[:, 0] == 1).all())
    assert by_cluster / 60 >= 0.88
    assert by_datapoint / 60 <= 0.6


def test_models_far_apart_in_every_cluster_are_separated() -> None:
    rng = np.random.default_rng(5)
    cluster = np.repeat(np.arange(10), 20)
    values = np.stack([rng.random(200) < p for p in (0.2, 0.5, 0.9)]).astype(float)
    t_obs, null = cluster_ranks.cluster_permutation_statistics(values, cluster, 300, 0)
    assert ranks._sets(t_obs, null, 0.05, "simultaneous").tolist() == [[3, 3], [2, 2], [1, 1]]


def test_too_few_clusters_are_refused_in_one_line() -> None:
    assert cluster_ranks.minimum_clusters(0.05) == 6  # 2 / 2^6 <= 0.05 < 2 / 2^5
    values = np.random.default_rng(0).random((2, 50))
    with pytest.raises(ValueError, match=r"at least 6 clusters .* got 5$") as err:
        cluster_ranks.cluster_permutation_statistics(values, [k % 5 for k in range(50)], 50, 0)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="49 cluster labels for 50 datapoints"):
        cluster_ranks.cluster_permutation_statistics(values, list(range(49)), 50, 0)


def test_sign_flips_of_whole_clusters_hold_where_only_some_models_depend_on_them() -> None:
    """Four equal models, two of them depending strongly on the cluster and two not at all:
    not exchangeable within a cluster. The sign-flip sets hold all true ranks in most of 60
    seeded benchmarks; the statistic is the mean difference over the cluster-robust standard
    error with the residuals taken about 0, H0's mean (statsmodels' sum over clusters of the
    scores' outer products, ``S_crosssection``, with the G / (G - 1) correction)."""
    from statsmodels.stats.sandwich_covariance import S_crosssection

    rng = np.random.default_rng(7)
    sizes = [120, 40, 30, 25, 12, 10, 8, 7, 6, 5] + [3] * 10 + [1] * 10
    held = 0
    for sim in range(60):
        one, cluster = _clustered(rng, 2, sizes, 0.5)
        two, _ = _clustered(rng, 2, sizes, 0.0)
        values = np.concatenate([one, two])
        t_obs, null = cluster_ranks.cluster_sign_flip_statistics(values, cluster, 200, sim)
        held += bool((ranks._sets(t_obs, null, 0.05, "simultaneous")[:, 0] == 1).all())
    assert held / 60 >= 0.88 and null.shape == (4, 4, 201)
    assert np.array_equal(null[:, :, 0], t_obs)  # the observed signs are one of the draws
    d = values[0] - values[3]
    g = len(set(cluster))
    meat = S_crosssection(d[:, None], cluster)[0, 0]
    assert t_obs[0, 3] == pytest.approx(d.mean() / (np.sqrt(g / (g - 1) * meat) / len(d)))
    assert t_obs[3, 0] == pytest.approx(-t_obs[0, 3])


def test_sign_flips_separate_far_models_and_refuse_too_unequal_clusters() -> None:
    rng = np.random.default_rng(5)
    cluster = np.repeat(np.arange(10), 20)
    values = np.stack([rng.random(200) < p for p in (0.2, 0.5, 0.9)]).astype(float)
    t_obs, null = cluster_ranks.cluster_sign_flip_statistics(values, cluster, 300, 0)
    assert ranks._sets(t_obs, null, 0.05, "simultaneous").tolist() == [[3, 3], [2, 2], [1, 1]]
    lopsided = np.repeat(np.arange(12), [300] + [1] * 11)  # weighs as 1.07 equal clusters
    assert cluster_ranks.effective_clusters([300] + [1] * 11) == pytest.approx(1.07, abs=0.01)
    with pytest.raises(ValueError, match=r"weigh as 1\.07 equal ones, fewer than the 5") as err:
        cluster_ranks.cluster_sign_flip_statistics(rng.random((2, 311)), lopsided, 50, 0)
    assert "\n" not in str(err.value)
