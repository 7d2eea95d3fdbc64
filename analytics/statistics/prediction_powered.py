"""Many judged, few people: a mean by prediction-powered inference, power-tuned (PPI++:
Angelopoulos, Duchi and Zrnic 2023, after Angelopoulos, Bates, Fannjiang, Jordan and Zrnic,
Science 2023).

A model judge rated every target; people rated a random subset of n of them, the other
N_u the judge alone. The people's mean over the n is unbiased but wide; the judge's mean is
precise but biased by whatever the judge gets wrong. The prediction-powered mean adds to
the people's mean the judge's shift from the rated targets to the unrated ones, weighted by
λ:

    θ = mean(people over n) + λ · (mean(judge over N_u) − mean(judge over n))
    var = var(people − λ·judge over n) / n + λ² · var(judge over N_u) / N_u

The two samples are disjoint, as the method's labelled and unlabelled sets are (a target
people rated is not counted again among the judge's alone: counting it in both would leave
out their covariance and misstate the variance). λ is PPI++'s power tuning,
Cov(people, judge) / ((1 + n/N_u) · Var(judge)) over the rated targets and all judged ones,
clipped to [0, 1] as the authors' ``ppi_py`` does: 1 is the original PPI, 0 the people's mean
alone, so the interval is never wider than the people's own to first order. With no unrated
target there is nothing to add, and nothing prediction-powered is reported.

Every interval is a normal one on the logit of the mean's place in its range (a rating
scale's lowest to highest point, a win rate's 0 to 1), by the delta method, so that it
stays inside the range; an estimate on a bound gets the normal interval cut at the range.
``equivalent_people`` says how many people's ratings alone would give the same variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from analytics.statistics.bounded import bounded_interval


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
    """Every target the judge rated: the n people rated and the N_u they did not."""
    equivalent_people: float
    """People's ratings alone that would give the prediction-powered variance."""
    power: float
    """λ, PPI++'s weight of the judge (0: the people's mean alone, 1: the original PPI)."""

    @property
    def ratings_saved(self) -> float:
        return max(0.0, self.equivalent_people - self.n_people)


def bounded_estimate(
    value: float, variance: float, z: float, bounds: tuple[float, float]
) -> Estimate:
    """The mean (kept in ``bounds``) with an interval inside them (``bounded.METHOD``)."""
    if not variance >= 0 or not math.isfinite(value):
        return Estimate(value, math.nan, math.nan)
    value = min(max(value, bounds[0]), bounds[1])
    return Estimate(value, *bounded_interval(value, z * math.sqrt(variance), bounds))


def prediction_powered_mean(
    judged_unrated: np.ndarray,
    judged_rated: np.ndarray,
    people_rated: np.ndarray,
    bounds: tuple[float, float],
    confidence: float = 0.95,
) -> PredictionPowered | None:
    """``judged_unrated``: the judge's ratings of the targets people did not rate;
    ``judged_rated`` and ``people_rated``: the judge's and people's ratings of those they
    did, in the same order; ``bounds``: the lowest and highest value a rating can take.
    None with fewer than 2 people's ratings or fewer than 2 targets the judge alone rated."""
    n, unrated = len(people_rated), len(judged_unrated)
    if n < 2 or unrated < 2 or len(judged_rated) != n:
        return None
    z = float(ndtri(0.5 + confidence / 2))  # norm.ppf's own function, not its checks
    judged = np.concatenate([judged_rated, judged_unrated])
    judge_var = float(np.var(judged, ddof=1))
    covariance = float(np.cov(people_rated, judged_rated, ddof=1)[0, 1])
    power = covariance / ((1 + n / unrated) * judge_var) if judge_var > 0 else 0.0
    power = min(max(power, 0.0), 1.0)
    value = float(np.mean(people_rated) + power * (np.mean(judged_unrated) - np.mean(judged_rated)))
    variance = (
        float(np.var(people_rated - power * judged_rated, ddof=1)) / n
        + power**2 * float(np.var(judged_unrated, ddof=1)) / unrated
    )
    people_var = float(np.var(people_rated, ddof=1))
    ppi = bounded_estimate(value, variance, z, bounds)
    people = bounded_estimate(float(np.mean(people_rated)), people_var / n, z, bounds)
    judge = bounded_estimate(float(np.mean(judged)), judge_var / len(judged), z, bounds)
    equivalent = people_var / variance if variance > 0 else math.inf
    return PredictionPowered(ppi, people, judge, n, len(judged), equivalent, power)
