"""Many judged, few people: a mean by prediction-powered inference (Angelopoulos, Bates,
Fannjiang, Jordan and Zrnic, Science 2023).

A model judge rated all N targets; people rated a random subset of n of them. The judge's
mean over all N is precise but biased by whatever the judge gets wrong; the people's mean
over n is unbiased but wide. The prediction-powered mean corrects the judge's mean by the
judge's average error where people rated:

    theta = mean(judge over N) + mean(people - judge over n)
    var   = var(judge over N) / N + var(people - judge over n) / n

with a normal interval. It is unbiased whenever the n are a random sample of the N, and
narrower than people's alone as far as the judge tracks people. ``equivalent_people`` says
how many people's ratings alone would give an interval as narrow."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class PredictionPowered:
    """The three estimates of a mean side by side, and what the judge saved."""

    prediction_powered: Estimate
    people_only: Estimate
    judge_only: Estimate
    """Biased by the judge's errors: shown to compare, never to report alone."""
    n_people: int
    n_judged: int
    equivalent_people: float
    """People's ratings alone that would give the prediction-powered interval's width."""

    @property
    def ratings_saved(self) -> float:
        return max(0.0, self.equivalent_people - self.n_people)


def _estimate(value: float, variance: float, z: float) -> Estimate:
    half = z * math.sqrt(variance) if variance >= 0 else math.nan
    return Estimate(value, value - half, value + half)


def prediction_powered_mean(
    judged_all: np.ndarray,
    judged_rated: np.ndarray,
    people_rated: np.ndarray,
    confidence: float = 0.95,
) -> PredictionPowered | None:
    """``judged_all``: the judge's ratings of every target; ``judged_rated`` and
    ``people_rated``: the judge's and people's ratings of the targets people rated, in the
    same order. None with fewer than 2 people's ratings or fewer judged targets than rated."""
    n, big_n = len(people_rated), len(judged_all)
    if n < 2 or big_n < n or len(judged_rated) != n:
        return None
    z = float(norm.ppf(0.5 + confidence / 2))
    error = people_rated - judged_rated
    judge_var = float(np.var(judged_all, ddof=1)) / big_n
    error_var = float(np.var(error, ddof=1)) / n
    people_var = float(np.var(people_rated, ddof=1))
    ppi = _estimate(float(np.mean(judged_all) + np.mean(error)), judge_var + error_var, z)
    people = _estimate(float(np.mean(people_rated)), people_var / n, z)
    judge = _estimate(float(np.mean(judged_all)), judge_var, z)
    both = judge_var + error_var
    equivalent = people_var / both if both > 0 else math.inf
    return PredictionPowered(ppi, people, judge, n, big_n, equivalent)
