"""Scores on a stated scale with two intervals each, and ranks with intervals.

The bootstrap resamples whole raters (participants or annotators) with replacement, since
the votes of one person are not independent: a round is every drawn rater's counts,
weighted by how often the rater was drawn, refitted. Its percentile interval sits beside
the sandwich (robust) interval clustered by rater, the normal interval with the
sandwich standard error. Ranks are Chatbot Arena's: a system's rank is 1 + the number of
systems whose lower bound is above its upper bound, so systems whose intervals overlap
share a rank; the worst rank it could have is beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from analytics.statistics.pairwise.fitting import (
    BOUND,
    Battles,
    Design,
    covariances,
    fit,
    newton_rounds,
)

ELO = 400 / math.log(10)
"""Points on the Elo scale per unit of log-strength: a 400-point lead is odds of 10 to 1."""
CHUNK = 100
"""Bootstrap rounds fitted together: bounds the memory of a round's weights and counts."""


@dataclass(frozen=True)
class Resampled:
    """Every bootstrap round's parameters (NaN for a system no drawn rater compared)."""

    theta: np.ndarray
    """Rounds × the model's width, log-strengths clipped to ±``BOUND``."""
    converged: np.ndarray
    """Per round: whether its maximum-likelihood estimate was finite."""


def rater_bootstrap(
    battles: Battles, model: Design, estimate: np.ndarray, *, rounds: int, seed: int
) -> Resampled:
    """``rounds`` refits, each on raters drawn with replacement (numpy's PCG64, ``seed``)."""
    rng = np.random.default_rng(seed)
    raters = len(battles.raters)
    transposed = battles.counts.T.tocsr()
    systems = len(battles.systems)
    thetas, converged = [], []
    for start in range(0, rounds, CHUNK):
        size = min(CHUNK, rounds - start)
        drawn = rng.integers(0, raters, size=(size, raters))
        offsets = drawn + (np.arange(size) * raters)[:, None]
        weights = np.bincount(offsets.ravel(), minlength=size * raters).reshape(size, raters)
        totals = np.asarray(transposed @ weights.T.astype(float)).T.reshape(size, -1, 3)
        theta, done = newton_rounds(model, totals, estimate)
        met = np.zeros((size, systems))
        per_pair = totals.sum(axis=2)
        for k in range(systems):
            met[:, k] = per_pair[:, (battles.first == k) | (battles.second == k)].sum(axis=1)
        free = np.delete(met, model.anchor, axis=1) == 0
        theta[:, : free.shape[1]][free] = np.nan
        thetas.append(theta)
        converged.append(done)
    return Resampled(np.concatenate(thetas), np.concatenate(converged))


def percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the percentile interval; a bound at ``BOUND`` is infinite."""
    tail = (1 - level) / 2
    low, high = np.nanquantile(samples, [tail, 1 - tail], axis=0)
    low = np.where(low <= -BOUND + 1e-9, -np.inf, low)
    high = np.where(high >= BOUND - 1e-9, np.inf, high)
    return low, high


def arena_ranks(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank = 1 + systems whose lower bound is above this one's upper bound (Arena's); the
    worst rank = systems minus those whose upper bound is below this one's lower bound."""
    above = (low[None, :] > high[:, None]).sum(axis=1)
    below = (high[None, :] < low[:, None]).sum(axis=1)
    return 1 + above, len(low) - below


@dataclass(frozen=True)
class Scores:
    """One question's fit: the systems' scores and the other parameters, tidy."""

    systems: pd.DataFrame
    parameters: pd.DataFrame
    converged_rounds: int


def scores(
    battles: Battles,
    model: Design,
    *,
    rounds: int,
    seed: int,
    level: float,
    anchor_score: float,
) -> Scores | None:
    """Fit, resample and rank: one row per system and one per further parameter; None when
    the estimate is not finite (say, the system shown first won every vote)."""
    estimate = fit(model, battles.totals())
    if not np.isfinite(estimate).all() or np.abs(estimate).max() >= BOUND:
        return None
    model_cov, robust_cov = covariances(battles, model, estimate)
    resampled = rater_bootstrap(battles, model, estimate, rounds=rounds, seed=seed)
    boot_low, boot_high = percentile_interval(resampled.theta, level)
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    # a variance a hair below 0 is rounding in a (nearly) singular information matrix
    robust_se = np.sqrt(np.clip(np.diag(robust_cov), 0.0, None))
    model_se = np.sqrt(np.clip(np.diag(model_cov), 0.0, None))
    free = model.x.shape[1] - (1 if model.position else 0)

    def per_system(values: np.ndarray, anchor_value: float = 0.0) -> np.ndarray:
        return np.insert(values[:free], model.anchor, anchor_value)

    beta = per_system(estimate)
    low, high = per_system(boot_low), per_system(boot_high)
    rank, worst = arena_ranks(low, high)
    totals = battles.as_given()
    rows = []
    for k, name in enumerate(battles.systems):
        as_first, as_second = battles.first == k, battles.second == k
        wins = totals[as_first, 0].sum() + totals[as_second, 1].sum()
        losses = totals[as_first, 1].sum() + totals[as_second, 0].sum()
        ties = totals[as_first | as_second, 2].sum()
        se = per_system(robust_se)[k]
        rows.append(
            {
                "system": name,
                "anchor": k == model.anchor,
                "comparisons": int(wins + losses + ties),
                "wins": int(wins),
                "losses": int(losses),
                "ties": int(ties),
                "log_strength": beta[k],
                "boot_low": low[k],
                "boot_high": high[k],
                "sandwich_low": beta[k] - z * se,
                "sandwich_high": beta[k] + z * se,
                "se_sandwich": se,
                "se_model": per_system(model_se)[k],
                "elo": anchor_score + ELO * beta[k],
                "elo_boot_low": anchor_score + ELO * low[k],
                "elo_boot_high": anchor_score + ELO * high[k],
                "elo_sandwich_low": anchor_score + ELO * (beta[k] - z * se),
                "elo_sandwich_high": anchor_score + ELO * (beta[k] + z * se),
                "rank": int(rank[k]),
                "rank_worst": int(worst[k]),
            }
        )
    systems = pd.DataFrame(rows)
    systems = systems.sort_values(["log_strength", "system"], ascending=[False, True])
    parameters = []
    if model.position:
        parameters.append(("shown_first", free))
    if model.ties == "davidson":
        parameters.append(("tie_log_nu", model.width - 1))
    extra = [
        {
            "parameter": name,
            "estimate": estimate[j],
            "boot_low": boot_low[j],
            "boot_high": boot_high[j],
            "sandwich_low": estimate[j] - z * robust_se[j],
            "sandwich_high": estimate[j] + z * robust_se[j],
            "se_sandwich": robust_se[j],
            "se_model": model_se[j],
        }
        for name, j in parameters
    ]
    columns = [
        "parameter", "estimate", "boot_low", "boot_high", "sandwich_low", "sandwich_high",
        "se_sandwich", "se_model",
    ]  # fmt: skip
    return Scores(
        systems.reset_index(drop=True),
        pd.DataFrame(extra, columns=columns),
        int(resampled.converged.sum()),
    )
