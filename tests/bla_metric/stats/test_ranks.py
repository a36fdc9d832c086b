"""Rank intervals, Holm, tied groups, minimum detectable effect and ECE, on constructed data."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from bla_metric.stats import calibration, ranks


def _stats(correct: np.ndarray, sentences: int = 4) -> dict[str, np.ndarray]:
    """Ranking-view per-datapoint statistics from correctly placed sentence counts."""
    return {
        "correct": correct.astype(float),
        "sentences": np.full(len(correct), sentences),
        "set_accuracy": (correct == sentences).astype(float),
        "set_error": (correct == 0).astype(float),
    }


def _simulate(rng: np.random.Generator, truths: list[float], n: int) -> list[dict]:
    return [_stats(rng.binomial(4, p, n)) for p in truths]


def test_far_apart_models_have_disjoint_intervals_and_equal_ones_are_tied() -> None:
    rng = np.random.default_rng(1)
    weak, strong = _simulate(rng, [0.5, 0.9], 600)
    twin = {k: v.copy() for k, v in strong.items()}
    twin["correct"][:3] = np.clip(twin["correct"][:3] - 1, 0, 4)  # the same up to noise
    stats = [weak, strong, twin]
    rows = ranks.rank_intervals(stats, "ranking", "sentence_accuracy", 300, seed=0)
    assert rows[0]["interval"] == [3, 3] and rows[0]["rank"] == 3
    assert rows[1]["interval"][1] <= 2 and rows[2]["interval"][1] <= 2
    assert rows[0]["ci"][1] < min(rows[1]["ci"][0], rows[2]["ci"][0])
    tests = ranks.pairwise_tests(stats, "ranking", "sentence_accuracy", 300, seed=0)
    assert tests[(1, 2)]["p_holm"] >= 0.05 > tests[(0, 1)]["p_holm"]
    groups = ranks.tied_groups([r["value"] for r in rows], tests)
    assert groups == [[1, 2], [0]]
    again = ranks.rank_intervals(stats, "ranking", "sentence_accuracy", 300, seed=0)
    assert again == rows  # seeded


def test_rank_interval_coverage_in_a_small_simulation() -> None:
    """Four models with known true sentence accuracies (true ranks 4, 3, 2, 1), n = 300
    datapoints, 40 simulated benchmarks, 200 resamples each: the share of (benchmark, model)
    whose true rank lies in its 95% rank interval."""
    truths = [0.50, 0.53, 0.56, 0.65]
    true_rank = [4, 3, 2, 1]
    rng = np.random.default_rng(7)
    covered = total = 0
    for sim in range(40):
        stats = _simulate(rng, truths, 300)
        rows = ranks.rank_intervals(stats, "ranking", "sentence_accuracy", 200, seed=sim)
        for row, truth in zip(rows, true_rank, strict=True):
            covered += row["interval"][0] <= truth <= row["interval"][1]
            total += 1
    assert covered / total >= 0.85


def _normal_draws(means: list[float], se: float, resamples: int, seed: int) -> np.ndarray:
    """Bootstrap-like draws of independent estimates around ``means`` (models, resamples)."""
    rng = np.random.default_rng(seed)
    return np.asarray(means)[:, None] + se * rng.standard_normal((len(means), resamples))


def test_rank_sets_of_the_csranks_example() -> None:
    """The example of R's csranks (Mogstad, Romano, Shaikh & Wilhelm): ten estimates evenly
    from 1 to 3 with standard error 0.2 each. Neighbours (0.22 apart) cannot be told apart, the
    two ends can; marginal sets are never wider than simultaneous ones."""
    means = list(np.linspace(1, 3, 10))
    draws = _normal_draws(means, 0.2, 4000, seed=3)
    joint = ranks.rank_sets(np.array(means), draws)
    marginal = ranks.rank_sets(np.array(means), draws, kind="marginal")
    assert (joint[:, 0] <= marginal[:, 0]).all() and (marginal[:, 1] <= joint[:, 1]).all()
    for model, (low, high) in enumerate(joint):
        true_rank = 10 - model
        assert low <= true_rank <= high and low < high  # neighbours overlap
    assert joint[0, 0] > 1 and joint[9, 1] < 10  # the ends are told apart
    assert ranks.best_set(joint) == [m for m in range(10) if joint[m, 0] == 1]
    assert 9 in ranks.best_set(joint) and 0 not in ranks.best_set(joint)


def test_rank_sets_equal_and_degenerate_models_are_never_separated() -> None:
    equal = _normal_draws([0.5] * 6, 0.01, 1000, seed=1)
    sets = ranks.rank_sets(equal.mean(axis=1), equal)
    assert sets.tolist() == [[1, 6]] * 6
    # one datapoint: every resample is the same, no difference varies
    frozen = np.repeat(np.array([[1.0], [0.0], [0.5]]), 200, axis=1)
    assert ranks.rank_sets(np.array([1.0, 0.0, 0.5]), frozen).tolist() == [[1, 3]] * 3
    with pytest.raises(ValueError, match="rank sets 'joint'"):
        ranks.rank_sets(np.zeros(2), np.zeros((2, 5)), kind="joint")


def test_rank_set_groups_follow_the_step_down() -> None:
    # 0 beats 2; 1 is tied with both
    assert ranks.rank_set_groups([0.9, 0.8, 0.7], [[2], [], []]) == [[0, 1], [1, 2]]


def test_holm_by_hand() -> None:
    assert ranks.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert ranks.holm([0.5, 0.9]) == [1.0, 1.0]


def test_minimum_detectable_effect_formula() -> None:
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert z == pytest.approx(2.8016, abs=1e-4)
    assert ranks.minimum_detectable_effect(0.3, 600) == pytest.approx(z * 0.3 / 600**0.5)
    rng = np.random.default_rng(0)
    a, b = _simulate(rng, [0.5, 0.6], 500)
    found = ranks.detectable_difference([a, b], "ranking", "sentence_accuracy")
    sd = np.std(a["correct"] / 4 - b["correct"] / 4, ddof=1)
    assert found["sd"] == pytest.approx(sd) and found["mde"] == pytest.approx(z * sd / 500**0.5)
    assert [(p["a"], p["b"]) for p in found["adjacent"]] == [(1, 0)]
    assert found["adjacent"][0]["mde"] == pytest.approx(found["mde"])  # one pair: no correction
    same = ranks.detectable_difference([a, a], "ranking", "sentence_accuracy")
    assert np.isnan(same["mde"])  # no variation: undefined, not 0
    one = ranks.detectable_difference(
        [_stats(np.array([4])), _stats(np.array([0]))], "ranking", "sentence_accuracy"
    )
    assert np.isnan(one["mde"]) and np.isnan(one["sd"])


def test_expected_calibration_error_by_hand() -> None:
    # bin [0.2, 0.3): p 0.2 twice, one true -> |0.5 - 0.2| = 0.3, weight 2/6
    # bin [0.8, 0.9): p 0.8 four times, all true -> |1 - 0.8| = 0.2, weight 4/6
    probabilities = [[0.2, 0.8, 0.8], [0.2, 0.8, 0.8]]
    labels = [[1, 1, 1], [0, 1, 1]]
    assert calibration.expected_calibration_error(probabilities, labels) == pytest.approx(
        2 / 6 * 0.3 + 4 / 6 * 0.2
    )
    table = calibration.reliability(probabilities, labels)
    assert [row["n"] for row in table if row["n"]] == [2, 4]
    assert calibration.expected_calibration_error([[1.0, 0.0]], [[1, 0]]) == 0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration.expected_calibration_error([[1.5, 0.0]], [[1, 0]])


def test_set_accuracy_intervals_are_clopper_pearson_and_keep_their_width_at_zero() -> None:
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(2)
    never, often = _stats(np.zeros(40, int)), _stats(rng.binomial(4, 0.9, 40))
    rows = ranks.rank_intervals([never, often], "ranking", "set_accuracy", 100, seed=0)
    assert rows[0]["value"] == 0.0 and rows[0]["ci"][0] == 0.0 < rows[0]["ci"][1]
    hits = int(often["set_accuracy"].sum())
    assert rows[1]["ci"] == pytest.approx(list(proportion_confint(hits, 40, method="beta")))
    sentence = ranks.rank_intervals([never, often], "ranking", "sentence_accuracy", 100, seed=0)
    assert sentence[0]["ci"] == [0.0, 0.0]  # percentile interval: unchanged


def test_calibration_summary_has_a_test_a_floor_and_the_brier_score() -> None:
    rng = np.random.default_rng(4)
    p = rng.random((300, 4))
    y = (rng.random((300, 4)) < p).astype(int)  # calibrated by construction
    found = calibration.calibration_summary(p.tolist(), y.tolist(), resamples=200)
    assert found["ece"] == pytest.approx(calibration.expected_calibration_error(p, y))
    assert "ci" not in found  # no interval: none was found that holds
    assert found["p_value"] > 0.05 and found["ece"] < 2.5 * found["floor"]
    assert found["brier"] == pytest.approx(np.mean((p - y) ** 2))
    shifted = np.clip(p + 0.1, 0, 1)  # 10 points too sure of "true"
    assert calibration.calibration_summary(shifted, y.tolist(), resamples=200)["p_value"] < 0.01


def test_a_cluster_bootstrap_of_repeated_datapoints_is_that_of_the_originals() -> None:
    """Each of 150 datapoints four times over: resampling datapoints takes the copies for
    independent evidence (an interval half as wide); resampling the clusters of copies gives
    back the spread of the 150 originals."""
    from bla_metric import formulas

    rng = np.random.default_rng(0)
    originals = _stats(rng.binomial(4, 0.6, 150))
    copies = {k: np.repeat(v, 4) for k, v in originals.items()}
    clusters = np.repeat(np.arange(150), 4)

    def spread(stats, groups=None) -> float:
        draws = formulas.resampled("ranking", [stats], 2000, 0, groups)[0]
        return float(draws["sentence_accuracy"].std())

    assert spread(copies) == pytest.approx(spread(originals) / 2, rel=0.15)
    assert spread(copies, clusters) == pytest.approx(spread(originals), rel=0.15)
    draws = formulas.resampled("ranking", [copies], 500, 0, clusters)[0]
    assert draws["set_accuracy"].mean() == pytest.approx(originals["set_accuracy"].mean(), abs=0.01)
    with pytest.raises(ValueError, match="cluster labels"):
        formulas.resampled("ranking", [copies], 10, 0, clusters[:-1])


def test_permutation_statistics_are_paired_t_tests() -> None:
    from scipy import stats

    x = np.random.default_rng(4).binomial(4, 0.7, (3, 30)) / 4
    t_obs, null = ranks.permutation_statistics(x, 50, seed=0)
    assert t_obs[0, 1] == pytest.approx(stats.ttest_rel(x[0], x[1]).statistic)
    assert t_obs[2, 0] == pytest.approx(-t_obs[0, 2]) and null.shape == (3, 3, 51)
    assert (null[:, :, 0] == t_obs).all()  # the observed assignment is one of the draws


def test_permutation_rank_sets_separate_far_models_and_never_tie_breaking_noise() -> None:
    rng = np.random.default_rng(5)
    far = np.stack([rng.binomial(4, p, 200) / 4 for p in (0.8, 0.6, 0.4)])
    assert ranks.permutation_rank_sets(far, 500).tolist() == [[1, 1], [2, 2], [3, 3]]
    constant = np.full((4, 10), 0.5)  # every datapoint tied: nothing told apart
    assert ranks.permutation_rank_sets(constant, 200).tolist() == [[1, 4]] * 4
    one = np.array([[1.0], [0.5]])  # one datapoint: the sign flip cannot tell
    assert ranks.permutation_rank_sets(one, 200).tolist() == [[1, 2], [1, 2]]


def test_rank_intervals_permute_within_datapoints_or_within_clusters() -> None:
    rng = np.random.default_rng(6)
    stats = [_stats(rng.binomial(4, 0.7, 30)) for _ in range(3)]
    rows = ranks.rank_intervals(stats, "ranking", "sentence_accuracy", 200)
    assert {row["rank_method"] for row in rows} == {"permutation"}
    clusters = [k % 6 for k in range(30)]
    rows = ranks.rank_intervals(stats, "ranking", "sentence_accuracy", 200, clusters=clusters)
    assert {row["rank_method"] for row in rows} == {"cluster sign flip"}
    with pytest.raises(ValueError, match="at least 6 clusters"):
        ranks.rank_intervals(
            stats, "ranking", "sentence_accuracy", 200, clusters=[k % 5 for k in range(30)]
        )


def test_a_marginal_set_uses_its_own_familys_rejections_only() -> None:
    """MRSW: model 0's set counts only what the step-down over model 0's pairs rejects. Model
    1's family (smaller critical value) rejects "1 is not better than 0"; model 0's does not,
    so model 0 keeps rank 1 in its set (the union of the families gave it [2, 3])."""
    z = np.random.default_rng(7).standard_normal((3, 3, 4000))
    scale = np.array([[1.0, 1.0, 3.0], [1.0, 1.0, 0.5], [3.0, 0.5, 1.0]])
    null = z * scale[:, :, None]
    t_obs = np.zeros((3, 3))
    t_obs[1, 0] = 2.6
    sets = ranks._sets(t_obs, null, 0.05, "marginal")
    assert sets[0].tolist() == [1, 3] and sets[1].tolist() == [1, 2]
