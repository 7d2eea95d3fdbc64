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
    Battles,
    Design,
    covariances,
    fit,
    newton_rounds,
    win_order,
)

ELO = 400 / math.log(10)
"""Points on the Elo scale per unit of log-strength: a 400-point lead is odds of 10 to 1."""
CHUNK = 100
"""Bootstrap rounds fitted together: bounds the memory of a round's weights and counts."""


@dataclass(frozen=True)
class Resampled:
    """Every bootstrap round's parameters (NaN for a system no drawn rater compared)."""

    theta: np.ndarray
    """Rounds × the model's width: ±∞ for a parameter whose estimate is infinite."""
    converged: np.ndarray
    """Per round: whether its estimate was finite."""
    loose: np.ndarray
    """Rounds × width: left undetermined by a round without a finite estimate."""


def rater_bootstrap(
    battles: Battles,
    model: Design,
    estimate: np.ndarray,
    *,
    rounds: int,
    seed: int,
    penalised: bool = False,
) -> Resampled:
    """``rounds`` refits, each on raters drawn with replacement (numpy's PCG64, ``seed``),
    by the estimator of ``estimate`` (``penalised``: Firth's)."""
    rng = np.random.default_rng(seed)
    raters = len(battles.raters)
    transposed = battles.counts.T.tocsr()
    systems = len(battles.systems)
    thetas, converged, loose = [], [], []
    for start in range(0, rounds, CHUNK):
        size = min(CHUNK, rounds - start)
        drawn = rng.integers(0, raters, size=(size, raters))
        offsets = drawn + (np.arange(size) * raters)[:, None]
        weights = np.bincount(offsets.ravel(), minlength=size * raters).reshape(size, raters)
        totals = np.asarray(transposed @ weights.T.astype(float)).T.reshape(size, -1, 3)
        fitted = newton_rounds(model, totals, estimate, penalised=penalised)
        met = np.zeros((size, systems))
        per_pair = totals.sum(axis=2)
        for k in range(systems):
            met[:, k] = per_pair[:, (battles.first == k) | (battles.second == k)].sum(axis=1)
        absent = np.zeros_like(fitted.loose)
        absent[:, : systems - 1] = np.delete(met, model.anchor, axis=1) == 0
        fitted.theta[absent] = np.nan
        thetas.append(fitted.theta)
        converged.append(fitted.converged)
        loose.append(fitted.loose & ~absent)
    return Resampled(np.concatenate(thetas), np.concatenate(converged), np.concatenate(loose))


def percentile_interval(
    samples: np.ndarray, level: float, loose: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the percentile interval over the rounds that estimate it (NaN: not
    compared in the round). Rounds with an infinite estimate count at their end, and one
    that leaves the parameter undetermined (``loose``) at both ends, so that an end reached
    by more than its tail's share of such rounds (2.5% of 95%) is infinite."""
    tail = (1 - level) / 2
    unset = np.zeros(samples.shape, dtype=bool) if loose is None else loose
    low = _quantile(np.where(unset, -np.inf, samples), tail)
    high = _quantile(np.where(unset, np.inf, samples), 1 - tail)
    return low, high


def _quantile(samples: np.ndarray, q: float) -> np.ndarray:
    """Per column, numpy's (linear) quantile with ±∞ among the values: one that reaches
    into them is infinite."""
    finite = np.where(np.isfinite(samples), samples, np.nan)
    largest = np.nanmax(np.abs(finite), axis=0, initial=0.0)
    stand_in = np.where(np.isinf(samples), np.copysign(2 * largest + 1, samples), samples)
    value = np.nanquantile(stand_in, q, axis=0)
    return np.where(value > largest, np.inf, np.where(value < -largest, -np.inf, value))


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
    penalised: bool = False,
) -> Scores:
    """Fit, resample and rank: one row per system and one per further parameter. By
    maximum likelihood (which must exist: ``fitting.estimability``) with both intervals and
    Arena's ranks; ``penalised``, by Firth's bias-reduced likelihood, the bootstrap
    refitting the same way, no sandwich interval (it rests on the likelihood's score being
    0 at the estimate) and the ranks the wins give (``win_order``)."""
    totals = battles.totals()
    estimate = fit(model, totals, penalised=penalised)
    resampled = rater_bootstrap(
        battles, model, estimate, rounds=rounds, seed=seed, penalised=penalised
    )
    boot_low, boot_high = percentile_interval(resampled.theta, level, resampled.loose)
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    if penalised:
        robust_se = model_se = np.full(model.width, np.nan)
    else:
        model_cov, robust_cov = covariances(battles, model, estimate)
        # a variance a hair below 0 is rounding in a (nearly) singular information matrix
        robust_se = np.sqrt(np.clip(np.diag(robust_cov), 0.0, None))
        model_se = np.sqrt(np.clip(np.diag(model_cov), 0.0, None))
    free = model.x.shape[1] - (1 if model.position else 0)

    def per_system(values: np.ndarray, anchor_value: float = 0.0) -> np.ndarray:
        return np.insert(values[:free], model.anchor, anchor_value)

    beta = per_system(estimate)
    low, high = per_system(boot_low), per_system(boot_high)
    rank, worst = win_order(battles, totals) if penalised else arena_ranks(low, high)
    table = record(battles)
    se = per_system(robust_se)
    table["log_strength"] = beta
    table["boot_low"], table["boot_high"] = low, high
    table["sandwich_low"], table["sandwich_high"] = beta - z * se, beta + z * se
    table["se_sandwich"], table["se_model"] = se, per_system(model_se)
    for column in ("", "_boot_low", "_boot_high", "_sandwich_low", "_sandwich_high"):
        source = column.lstrip("_") or "log_strength"
        table[f"elo{column}"] = anchor_score + ELO * table[source]
    table["anchor"] = np.arange(len(table)) == model.anchor
    table["rank"], table["rank_worst"] = rank.astype(int), worst.astype(int)
    systems = table.sort_values(["log_strength", "system"], ascending=[False, True])
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


def record(battles: Battles) -> pd.DataFrame:
    """Per system: comparisons, wins, losses and ties as voted."""
    totals = battles.as_given()
    rows = []
    for k, name in enumerate(battles.systems):
        as_first, as_second = battles.first == k, battles.second == k
        wins = totals[as_first, 0].sum() + totals[as_second, 1].sum()
        losses = totals[as_first, 1].sum() + totals[as_second, 0].sum()
        ties = totals[as_first | as_second, 2].sum()
        rows.append(
            {
                "system": name,
                "comparisons": int(wins + losses + ties),
                "wins": int(wins),
                "losses": int(losses),
                "ties": int(ties),
            }
        )
    return pd.DataFrame(rows)


def wins_only(battles: Battles) -> pd.DataFrame:
    """The systems' record and the ranks their wins give, for votes no model can score
    (systems in groups that never met): every fitted number missing."""
    table = record(battles)
    rank, worst = win_order(battles, battles.totals())
    table["rank"], table["rank_worst"] = rank.astype(int), worst.astype(int)
    table["anchor"] = False
    return table.sort_values(["rank", "rank_worst", "system"]).reset_index(drop=True)
