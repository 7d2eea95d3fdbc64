"""Task success when a participant did several tasks: the participant, not the session, is
the unit that was sampled.

Sessions of one participant are not independent (a skilled participant succeeds more
often), so an interval over sessions is too narrow. Where some participant contributes
several sessions, the success rate's interval and the test between systems come from a
generalised estimating equation (GEE: binomial, logit link, exchangeable working
correlation within a participant, robust sandwich standard errors, the dispersion fixed
at 1 as for any Bernoulli outcome), as R's ``geepack::geeglm(..., corstr =
"exchangeable", scale.fix = TRUE)`` computes it (tests/r/success_gee.R). Where each
participant contributes one session, sessions are independent and Wilson's interval over
sessions stands.

A GEE cannot estimate a rate of 0% or 100% (the logit is infinite), and its sandwich
estimate rests on the number of participants: with every task of a group alike, the
interval is Wilson's over participants (each counted once, every one of their tasks having
the same outcome); with fewer than ``MIN_CLUSTERS`` participants, no interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import chi2, norm

from analytics.statistics.questionnaires import wilson_interval

MIN_CLUSTERS = 5
"""Fewer participants than this give no clustered interval: a sandwich estimate of the
variance from so few clusters is not worth printing."""
WILSON = "Wilson's interval over sessions (each participant contributed one session)"
GEE = (
    "GEE over sessions clustered by participant (binomial, logit link, exchangeable working "
    "correlation, robust standard errors): Wald interval on the logit scale"
)
GEE_TEST = (
    "GEE over sessions clustered by participant (binomial, logit link, exchangeable working "
    "correlation, robust standard errors): Wald χ² test of the systems' terms, odds ratios "
    "against the first system"
)
ALIKE = (
    "Wilson's interval over participants: every task in the group had the same outcome, "
    "which GEE cannot model"
)
NOT_CONVERGED = "no interval: the GEE did not converge"
FEW = (
    f"no interval: fewer than {MIN_CLUSTERS} participants for an interval clustered by participant"
)


def clustered(outcomes: pd.DataFrame, cluster: str = "participant_id") -> bool:
    """Whether some participant contributes several rows (sessions)."""
    return bool(outcomes[cluster].duplicated().any())


@dataclass(frozen=True)
class Rate:
    rate: float
    low: float
    high: float
    method: str
    working_correlation: float = math.nan


def success_rate(
    outcomes: pd.DataFrame,
    *,
    value: str = "succeeded",
    cluster: str = "participant_id",
    confidence: float = 0.95,
) -> Rate:
    """The rate of ``value`` (0/1) over the rows, with the interval its sampling calls for."""
    y = outcomes[value].astype(float).to_numpy()
    n, k = len(y), int(y.sum())
    if not n:
        return Rate(math.nan, math.nan, math.nan, WILSON)
    if not clustered(outcomes, cluster):
        low, high = wilson_interval(k, n, confidence)
        return Rate(k / n, low, high, WILSON)
    people = outcomes[cluster].nunique()
    if people < MIN_CLUSTERS:
        return Rate(k / n, math.nan, math.nan, FEW)
    if k in (0, n):
        low, high = wilson_interval(people if k else 0, people, confidence)
        return Rate(k / n, low, high, ALIKE)
    fit = fit_gee(y, np.ones((n, 1)), outcomes[cluster])
    if fit is None:
        return Rate(k / n, math.nan, math.nan, NOT_CONVERGED)
    estimate, se = float(fit.params[0]), float(fit.bse[0])
    z = float(norm.ppf(0.5 + confidence / 2))
    return Rate(
        _expit(estimate),
        _expit(estimate - z * se),
        _expit(estimate + z * se),
        GEE,
        fit.working_correlation,
    )


TEST_COLUMNS = [
    "method", "n_sessions", "n_participants", "systems", "chi2", "df", "p",
    "working_correlation", "note",
]  # fmt: skip
TERM_COLUMNS = ["system_id", "reference", "odds_ratio", "ci_low", "ci_high", "p"]


def compare_success(
    outcomes: pd.DataFrame,
    *,
    value: str = "succeeded",
    cluster: str = "participant_id",
    group: str = "system_id",
    confidence: float = 0.95,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The GEE test of success between the groups (one row) and each group's odds ratio
    against the first (sorted) group, when sessions are clustered; empty frames when each
    participant contributed one session (no model is needed) or the test cannot be made
    (the one row then says why in ``note``)."""
    empty = pd.DataFrame(columns=TERM_COLUMNS)
    frame = outcomes[[cluster, group, value]].dropna()
    if not clustered(frame, cluster):
        return pd.DataFrame(columns=TEST_COLUMNS), empty
    systems = sorted(frame[group].astype(str).unique())
    y = frame[value].astype(float).to_numpy()
    row: dict[str, object] = {
        "method": GEE_TEST,
        "n_sessions": len(frame),
        "n_participants": int(frame[cluster].nunique()),
        "systems": len(systems),
        "chi2": math.nan,
        "df": len(systems) - 1,
        "p": math.nan,
        "working_correlation": math.nan,
        "note": None,
    }
    by_system = frame.groupby(frame[group].astype(str))[value].agg(["sum", "size"])
    alike = by_system[(by_system["sum"] == 0) | (by_system["sum"] == by_system["size"])]
    if len(systems) < 2:
        row["note"] = "fewer than two systems"
    elif row["n_participants"] < MIN_CLUSTERS:  # type: ignore[operator]
        row["note"] = f"fewer than {MIN_CLUSTERS} participants"
    elif len(alike):
        row["note"] = (
            "every task of " + ", ".join(alike.index) + " had the same outcome: the odds "
            "ratio is infinite or zero and the GEE cannot be fitted"
        )
    if row["note"] is not None:
        return pd.DataFrame([row], columns=TEST_COLUMNS), empty
    labels = frame[group].astype(str).to_numpy()
    x = np.column_stack([np.ones(len(frame))] + [labels == s for s in systems[1:]]).astype(float)
    fit = fit_gee(y, x, frame[cluster])
    if fit is None:
        row["note"] = NOT_CONVERGED
        return pd.DataFrame([row], columns=TEST_COLUMNS), empty
    beta, cov = fit.params[1:], fit.cov[1:, 1:]
    statistic = float(beta @ np.linalg.solve(cov, beta))
    row.update(
        chi2=statistic,
        p=float(chi2.sf(statistic, len(beta))),
        working_correlation=fit.working_correlation,
    )
    z = float(norm.ppf(0.5 + confidence / 2))
    se = fit.bse[1:]
    terms = pd.DataFrame(
        {
            "system_id": systems[1:],
            "reference": systems[0],
            "odds_ratio": np.exp(beta),
            "ci_low": np.exp(beta - z * se),
            "ci_high": np.exp(beta + z * se),
            "p": 2 * norm.sf(np.abs(beta / se)),
        },
        columns=TERM_COLUMNS,
    )
    return pd.DataFrame([row], columns=TEST_COLUMNS), terms


@dataclass(frozen=True)
class GeeFit:
    params: np.ndarray
    cov: np.ndarray
    """The robust (sandwich) covariance of ``params``."""
    working_correlation: float

    @property
    def bse(self) -> np.ndarray:
        return np.sqrt(np.diag(self.cov))


def fit_gee(
    y: np.ndarray, x: np.ndarray, clusters: pd.Series, *, maxiter: int = 200, ctol: float = 1e-12
) -> GeeFit | None:
    """The GEE as geepack's ``geeglm(family = binomial, corstr = "exchangeable",
    scale.fix = TRUE)`` fits it (tests/test_models_success.py), or None when it did not
    converge.

    Written out over arrays rather than called: statsmodels loops over the clusters in
    Python, a second a fit at 5,000 participants, where the exchangeable working
    correlation has a closed-form inverse, ``R⁻¹ = (I − c·J)/(1 − α)`` with
    ``c = α/(1 + (k − 1)α)`` for a cluster of ``k``, so every cluster's part is a sum over
    its rows. The iteration: start from the logistic regression (independence), then
    alternate a Fisher scoring step of the mean parameters with geepack's moment estimate
    of α (``_exchangeable_alpha``), until the score's norm is below ``ctol`` after α was
    updated at least once; the dispersion fixed at 1."""
    groups, sizes = _clusters(clusters)
    params = np.zeros(x.shape[1])
    for _ in range(maxiter):  # the independence fit statsmodels starts from
        step, score = _scoring_step(y, x, groups, sizes, params, 0.0)
        if step is None:
            return None
        params = params + step
        if np.sqrt(score @ score) < ctol:
            break
    alpha, updated = 0.0, False
    for _ in range(maxiter):
        step, score = _scoring_step(y, x, groups, sizes, params, alpha)
        if step is None:
            return None
        params = params + step
        if np.sqrt(score @ score) < ctol and updated:
            break
        alpha, updated = _exchangeable_alpha(y, x, groups, sizes, params), True
    else:
        return None
    cov = _sandwich(y, x, groups, sizes, params, alpha)
    if not np.all(np.isfinite(np.diag(cov))) or np.any(np.diag(cov) < 0):
        return None
    return GeeFit(params, cov, alpha)


def _clusters(clusters: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    groups = pd.factorize(clusters.astype(str))[0]
    return groups, np.bincount(groups).astype(float)


def _parts(
    y: np.ndarray, x: np.ndarray, params: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fitted mean's derivative, the residual, and the standard deviation of each row."""
    mean = 1.0 / (1.0 + np.exp(-(x @ params)))
    variance = mean * (1.0 - mean)
    return x * variance[:, None], y - mean, np.sqrt(variance)


def _solve(
    rows: np.ndarray, sd: np.ndarray, groups: np.ndarray, sizes: np.ndarray, alpha: float
) -> np.ndarray:
    """``V⁻¹·rows`` per cluster, ``V = diag(sd)·R·diag(sd)`` with R exchangeable."""
    scaled = rows / sd[:, None]
    c = alpha / (1.0 - alpha) / (1.0 + alpha * (sizes - 1.0))
    sums = _cluster_sums(scaled, groups, len(sizes))
    return (scaled / (1.0 - alpha) - c[groups, None] * sums[groups]) / sd[:, None]


def _cluster_sums(rows: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    return np.column_stack(
        [np.bincount(groups, weights=rows[:, j], minlength=count) for j in range(rows.shape[1])]
    )


def _scoring_step(
    y: np.ndarray,
    x: np.ndarray,
    groups: np.ndarray,
    sizes: np.ndarray,
    params: np.ndarray,
    alpha: float,
) -> tuple[np.ndarray | None, np.ndarray]:
    derivative, residual, sd = _parts(y, x, params)
    solved = _solve(np.column_stack([derivative, residual]), sd, groups, sizes, alpha)
    bread, score = derivative.T @ solved[:, :-1], derivative.T @ solved[:, -1]
    try:
        return np.linalg.solve(bread, score), score
    except np.linalg.LinAlgError:
        return None, score


def _exchangeable_alpha(
    y: np.ndarray, x: np.ndarray, groups: np.ndarray, sizes: np.ndarray, params: np.ndarray
) -> float:
    """geepack's moment estimate with the dispersion fixed at 1 (``scale.fix = TRUE``): the
    mean over every pair of rows within a cluster of their Pearson residuals' product.
    statsmodels divides by an estimated scale and takes ``p`` degrees of freedom off both
    sums, which differs from geepack's unless the clusters happen to balance the two (three
    tasks each in tests/r/success_gee.R, but not two tasks, nor unequal clusters:
    tests/r/success_gee_unbalanced.R); geepack is what a reviewer reruns."""
    _, residual, sd = _parts(y, x, params)
    pearson = residual / sd
    sums = np.bincount(groups, weights=pearson, minlength=len(sizes))
    pairs = float(np.sum(sizes * (sizes - 1.0)) / 2.0)
    return float((sums @ sums - pearson @ pearson) / 2.0 / pairs)


def _sandwich(
    y: np.ndarray,
    x: np.ndarray,
    groups: np.ndarray,
    sizes: np.ndarray,
    params: np.ndarray,
    alpha: float,
) -> np.ndarray:
    """The robust covariance ``B⁻¹·M·B⁻¹``: B the model's information, M the outer
    products of each cluster's score."""
    derivative, residual, sd = _parts(y, x, params)
    solved = _solve(np.column_stack([derivative, residual]), sd, groups, sizes, alpha)
    bread = derivative.T @ solved[:, :-1]
    scores = _cluster_sums(derivative * solved[:, -1:], groups, len(sizes))
    inverse = np.linalg.inv(bread)
    return inverse @ (scores.T @ scores) @ inverse


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
