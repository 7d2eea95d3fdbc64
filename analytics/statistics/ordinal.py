"""Repeated answers to one ordinal item: a cumulative link mixed model (proportional odds),
as R's ``ordinal::clmm`` fits it (tests/r/ordinal_clmm.R).

A Likert item's answers are ordered categories, not interval numbers: a linear model of them
assumes the step from "disagree" to "neutral" equals the step from "agree" to "strongly
agree", and with few categories it gives p-values a reviewer rerunning ``clmm`` will not
find (0.043 against 0.156 in one study). The model:

    logit P(Y ≤ j) = θ_j − x'β − u_participant,    u ~ N(0, σ²)

with thresholds θ_1 < … < θ_{K−1} for the K answers seen, the fixed effects of the linear
model (``analytics.statistics.mixed``: system, and within participants period and carry-over)
without its intercept, and a random intercept per participant. A positive β means higher
answers. Fitted by maximum likelihood, the participants' effects integrated out by
Gauss–Hermite quadrature (``NODES`` nodes: for the variances of rating data the integral is
exact to far more digits than R's adaptive quadrature prints); the fixed effects are tested
with Wald z and given Wald intervals, as ``summary(clmm(...))`` does, from the numerical
Hessian of the log-likelihood.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from scipy.stats import norm

NODES = 60
"""Gauss–Hermite nodes of the participants' integral."""
METHOD = (
    "Cumulative link mixed model (proportional odds, logit link, a random intercept per "
    "participant; maximum likelihood with Gauss–Hermite quadrature, as R's ordinal::clmm): "
    "estimates are log cumulative odds ratios (positive: higher answers), with Wald intervals "
    "and z tests"
)


@dataclass(frozen=True)
class OrdinalFit:
    beta: np.ndarray
    """The fixed effects (log cumulative odds ratios), in the design's column order."""
    se: np.ndarray
    thresholds: np.ndarray
    variance: float
    """σ², the participants' variance on the latent logistic scale."""
    log_likelihood: float


def fit_clmm(answers: np.ndarray, x: np.ndarray, participants: pd.Series) -> OrdinalFit | None:
    """The model of ``answers`` (numbers, ordered) on the columns of ``x`` (no intercept), or
    None when the optimiser did not converge or the Hessian is not positive definite."""
    levels = np.unique(answers)
    if len(levels) < 2:
        return None
    category = np.searchsorted(levels, answers)
    groups = pd.factorize(participants.astype(str))[0]
    likelihood = _Likelihood(category, len(levels), x, groups)
    start = _start(category, len(levels), x.shape[1])
    found = minimize(likelihood.negative, start, method="BFGS", options={"gtol": 1e-9})
    if not np.all(np.isfinite(found.x)) or not math.isfinite(found.fun):
        return None
    hessian = _hessian(likelihood.negative, found.x)
    try:
        covariance = np.linalg.inv(hessian)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.linalg.eigvalsh(hessian) > 0):
        return None
    k = len(levels) - 1
    p = x.shape[1]
    params = found.x
    beta = params[k : k + p]
    se = np.sqrt(np.diag(covariance)[k : k + p])
    return OrdinalFit(
        beta=beta,
        se=se,
        thresholds=_thresholds(params[:k]),
        variance=float(math.exp(2 * params[-1])),
        log_likelihood=-float(found.fun),
    )


def wald(fit: OrdinalFit, confidence: float = 0.95) -> pd.DataFrame:
    """Each fixed effect's estimate, SE, Wald interval, z and two-sided p."""
    z = float(norm.ppf(0.5 + confidence / 2))
    statistic = fit.beta / fit.se
    return pd.DataFrame(
        {
            "estimate": fit.beta,
            "se": fit.se,
            "ci_low": fit.beta - z * fit.se,
            "ci_high": fit.beta + z * fit.se,
            "statistic": statistic,
            "p": 2 * norm.sf(np.abs(statistic)),
        }
    )


class _Likelihood:
    """The marginal log-likelihood of the parameters (θ_1, the logarithms of the
    thresholds' increments, β, log σ): increasing thresholds and a positive σ by
    construction, so the optimiser needs no constraints."""

    def __init__(
        self, category: np.ndarray, levels: int, x: np.ndarray, groups: np.ndarray
    ) -> None:
        self.category, self.levels, self.x, self.groups = category, levels, x, groups
        self.count = int(groups.max()) + 1
        nodes, weights = np.polynomial.hermite.hermgauss(NODES)
        self.nodes = math.sqrt(2.0) * nodes
        self.log_weights = np.log(weights / math.sqrt(math.pi))

    def negative(self, params: np.ndarray) -> float:
        k = self.levels - 1
        thresholds = _thresholds(params[:k])
        beta = params[k : k + self.x.shape[1]]
        sigma = math.exp(params[-1])
        eta = self.x @ beta
        # every answer's probability at every node: F(θ_j − η − u) − F(θ_{j−1} − η − u)
        shift = eta[:, None] + sigma * self.nodes[None, :]
        upper = np.append(thresholds, np.inf)[self.category][:, None] - shift
        lower = np.insert(thresholds, 0, -np.inf)[self.category][:, None] - shift
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = expit(upper) - expit(lower)
            # the far tails: the difference underflows where one side is already 0 or 1
            tail = np.where(np.isneginf(lower), log_expit(upper), log_expit(-lower))
            log_p = np.where(probability > 1e-12, np.log(probability), tail)
        per_participant = np.zeros((self.count, NODES))
        np.add.at(per_participant, self.groups, log_p)
        total = per_participant + self.log_weights[None, :]
        peak = total.max(axis=1, keepdims=True)
        marginal = peak[:, 0] + np.log(np.exp(total - peak).sum(axis=1))
        return -float(marginal.sum())


def _thresholds(free: np.ndarray) -> np.ndarray:
    return np.concatenate([free[:1], free[0] + np.cumsum(np.exp(free[1:]))])


def _start(category: np.ndarray, levels: int, p: int) -> np.ndarray:
    """The thresholds of the answers' marginal cumulative shares, no effects, σ = 1."""
    shares = np.cumsum(np.bincount(category, minlength=levels))[:-1] / len(category)
    cuts = np.log(shares / (1 - shares))
    increments = np.log(np.maximum(np.diff(cuts), 1e-3))
    return np.concatenate([cuts[:1], increments, np.zeros(p), [0.0]])


def _hessian(f: object, at: np.ndarray, step: float = 1e-4) -> np.ndarray:
    """Central second differences of ``f`` at ``at``."""
    assert callable(f)
    k = len(at)
    h = step * np.maximum(np.abs(at), 1.0)
    hessian = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            total = 0.0
            for a, b, sign in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                point = at.copy()
                point[i] += a * h[i]
                point[j] += b * h[j]
                total += sign * f(point)
            hessian[i, j] = hessian[j, i] = total / (4 * h[i] * h[j])
    return hessian
