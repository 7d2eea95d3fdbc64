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
import warnings
from dataclasses import dataclass
from typing import Any

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
        float(fit.model.cov_struct.dep_params),
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
    beta, cov = np.asarray(fit.params)[1:], np.asarray(fit.cov_params())[1:, 1:]
    statistic = float(beta @ np.linalg.solve(cov, beta))
    row.update(
        chi2=statistic,
        p=float(chi2.sf(statistic, len(beta))),
        working_correlation=float(fit.model.cov_struct.dep_params),
    )
    z = float(norm.ppf(0.5 + confidence / 2))
    se = np.asarray(fit.bse)[1:]
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


def fit_gee(y: np.ndarray, x: np.ndarray, clusters: pd.Series) -> Any:
    """statsmodels' GEE as geepack fits it (tests/test_models_success.py), or None when it
    did not converge."""
    import statsmodels.api as sm

    groups = pd.factorize(clusters.astype(str))[0]
    model = sm.GEE(
        y,
        x,
        groups=groups,
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence is checked here, not warned about
        fit = model.fit(maxiter=200, ctol=1e-12)
        usable = fit.converged and np.all(np.isfinite(fit.bse))  # a negative variance: nan
    return fit if usable else None


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
