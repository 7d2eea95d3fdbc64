"""Prediction-powered means: a hand-computed known answer, and intervals that cover the
truth at about the nominal rate in a simulation where the judge is biased."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from analytics.statistics.prediction_powered import prediction_powered_mean


def test_a_known_answer() -> None:
    judged_all = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 3.0])
    judged_rated = np.array([1.0, 2.0, 3.0])
    people_rated = np.array([2.0, 2.0, 4.0])
    found = prediction_powered_mean(judged_all, judged_rated, people_rated)
    assert found is not None
    # mean(all) = 3, mean(error) = (1 + 0 + 1) / 3; var(all)/6 = 2/6; var(error)/3 = (1/3)/3
    assert found.prediction_powered.value == pytest.approx(3 + 2 / 3)
    half = 1.959963984540054 * math.sqrt(2 / 6 + 1 / 9)
    assert found.prediction_powered.high == pytest.approx(3 + 2 / 3 + half)
    assert found.people_only.value == pytest.approx(8 / 3)
    assert found.judge_only.value == pytest.approx(3.0)
    # people alone: var 4/3 per rating; as narrow as PPI with (4/3) / (2/6 + 1/9) ratings
    assert found.equivalent_people == pytest.approx((4 / 3) / (2 / 6 + 1 / 9))
    assert prediction_powered_mean(judged_all, judged_rated[:1], people_rated[:1]) is None


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
        found = prediction_powered_mean(judge, judge[rated], truth[rated])
        assert found is not None
        covered += found.prediction_powered.low <= target <= found.prediction_powered.high
        judge_covered += found.judge_only.low <= target <= found.judge_only.high
        saved.append(found.ratings_saved)
    assert 0.93 <= covered / runs <= 0.975
    assert judge_covered / runs < 0.2  # the judge alone is biased
    assert np.mean(saved) > 100  # the judge more than doubles the people's ratings' worth
