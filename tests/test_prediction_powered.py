"""Prediction-powered means (PPI++): a hand-computed known answer, nothing where people
rated every target, a variance that matches the estimator's spread when the targets people
rated are among those the judge rated, intervals inside the scale, and coverage in a
simulation where the judge is biased."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from analytics.statistics.prediction_powered import prediction_powered_mean

Z = 1.959963984540054


def test_a_known_answer_by_hand() -> None:
    judged_unrated = np.array([4.0, 5.0, 3.0])
    judged_rated = np.array([1.0, 2.0, 3.0])
    people_rated = np.array([2.0, 2.0, 4.0])
    found = prediction_powered_mean(judged_unrated, judged_rated, people_rated, (1.0, 5.0))
    assert found is not None
    # Var(judge over all six) = 10/5 = 2; Cov(people, judge) over the rated = 2/2 = 1;
    # λ = 1 / ((1 + 3/3) · 2) = 1/4
    assert found.power == pytest.approx(0.25)
    # θ = mean(people) + λ (mean(judge unrated) − mean(judge rated)) = 8/3 + (4 − 2)/4
    assert found.prediction_powered.value == pytest.approx(8 / 3 + 0.5)
    # var(people − judge/4) = var(1.75, 1.5, 3.25) = 43/48, over 3; + (1/16) · 1 / 3
    variance = 43 / 48 / 3 + 1 / 16 / 3
    assert variance == pytest.approx(23 / 72)
    # the interval: normal on the logit of the place in the scale 1..5, 13/24
    place = (8 / 3 + 0.5 - 1) / 4
    spread = Z * math.sqrt(variance) / (4 * place * (1 - place))
    logit = math.log(place / (1 - place))
    assert found.prediction_powered.low == pytest.approx(1 + 4 / (1 + math.exp(-(logit - spread))))
    assert found.prediction_powered.high == pytest.approx(1 + 4 / (1 + math.exp(-(logit + spread))))
    assert found.people_only.value == pytest.approx(8 / 3)
    assert found.judge_only.value == pytest.approx(3.0)
    assert (found.n_judged, found.n_people) == (6, 3)
    assert found.equivalent_people == pytest.approx((4 / 3) / (23 / 72))


def test_nothing_prediction_powered_where_people_rated_every_target() -> None:
    rated = np.array([1.0, 2.0, 3.0, 4.0])
    assert prediction_powered_mean(np.array([]), rated, rated + 1, (1.0, 5.0)) is None
    assert prediction_powered_mean(np.array([3.0]), rated, rated + 1, (1.0, 5.0)) is None
    assert prediction_powered_mean(rated, rated[:1], rated[:1], (1.0, 5.0)) is None


def test_the_variance_is_the_estimators_when_people_rated_some_of_the_judged() -> None:
    """People rate 15 of 40 targets the judge rated: over many studies, the stated standard
    error is the spread of the estimate (leaving out the covariance of the two means, as
    counting the rated targets among the judge's alone does, misstated it)."""
    rng = np.random.default_rng(7)
    estimates, variances = [], []
    for _ in range(4000):
        truth = rng.normal(0.5, 0.2, 40)
        judge = truth + rng.normal(0.1, 0.1, 40)
        rated = rng.choice(40, 15, replace=False)
        unrated = np.setdiff1d(np.arange(40), rated)
        found = prediction_powered_mean(judge[unrated], judge[rated], truth[rated], (-9, 9))
        assert found is not None
        estimates.append(found.prediction_powered.value)
        half = (found.prediction_powered.high - found.prediction_powered.low) / 2
        variances.append((half / Z) ** 2)
    assert np.std(estimates) == pytest.approx(math.sqrt(np.mean(variances)), rel=0.08)


def test_a_win_rate_near_zero_keeps_its_interval_inside_zero_to_one() -> None:
    judged_unrated = np.array([0.0] * 30 + [0.5, 1.0])
    judged_rated = np.array([0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0])
    people_rated = np.array([0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0])
    found = prediction_powered_mean(judged_unrated, judged_rated, people_rated, (0.0, 1.0))
    assert found is not None
    for estimate in (found.prediction_powered, found.people_only, found.judge_only):
        assert 0 <= estimate.low <= estimate.value <= estimate.high <= 1
    # an estimate on a bound: the normal interval cut there
    zero = prediction_powered_mean(np.zeros(5), np.zeros(3), np.zeros(3), (0.0, 1.0))
    assert zero is not None and zero.people_only.low == zero.people_only.high == 0.0


def test_intervals_cover_the_truth_at_about_the_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    truth_mean, covered, judge_covered, saved = 3.2, 0, 0, []
    # the mean people's ratings estimate: of a normal rating rounded to the scale 1..5
    cuts = norm.cdf(np.array([1.5, 2.5, 3.5, 4.5]) - truth_mean)
    shares = np.diff(np.concatenate([[0.0], cuts, [1.0]]))
    target = float(np.dot(shares, [1, 2, 3, 4, 5]))
    runs = 1000
    for _ in range(runs):
        truth = np.clip(np.round(rng.normal(truth_mean, 1.0, 2000)), 1, 5)
        # the judge: right 80 % of the time, else one point too high (biased upwards)
        judge = np.where(rng.random(2000) < 0.8, truth, np.minimum(truth + 1, 5))
        rated = rng.choice(2000, 100, replace=False)
        unrated = np.setdiff1d(np.arange(2000), rated)
        found = prediction_powered_mean(judge[unrated], judge[rated], truth[rated], (1, 5))
        assert found is not None
        covered += found.prediction_powered.low <= target <= found.prediction_powered.high
        judge_covered += found.judge_only.low <= target <= found.judge_only.high
        saved.append(found.ratings_saved)
    assert 0.93 <= covered / runs <= 0.975
    assert judge_covered / runs < 0.2  # the judge alone is biased
    assert np.mean(saved) > 100  # the judge more than doubles the people's ratings' worth
