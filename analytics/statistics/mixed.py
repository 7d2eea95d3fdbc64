"""Repeated measures: a linear mixed model of a score when participants gave it several
times (several tasks, or several systems within participants).

One row per answer set (a session's questionnaire, an imported form): the score, its
participant, system, scenario and time. The model (REML, fitted as R's
``lme4::lmer(..., REML = TRUE)`` fits it, by its profiled deviance; tests/r/mixed_idial.R):

- fixed: the system (treatment coding, the first system in sorted order the reference);
  where some participant met several systems, also the period (the answer set's place in
  the participant's own order, a factor, the first the reference) and carry-over (for each
  system but the reference, whether the participant's previous answer set was with it);
- random: an intercept per participant; where answer sets come from several scenarios, an
  intercept per scenario too, crossed with the participant's (a variance component).

Each fixed effect is tested with t and its degrees of freedom by Satterthwaite's
approximation, and its interval is estimate ± t(df)·SE, as R's ``lmerTest`` gives them
(tests/r/mixed_satterthwaite.R): with the 20 to 40 participants of a human evaluation, a Wald
z test is too liberal (p 0.0039 where lmerTest says 0.0061). The degrees of freedom come
from the REML deviance as a function of the variances: its Hessian gives their covariance,
and the derivatives of each estimate's variance in them the approximation's denominator
(Satterthwaite 1946; Kuznetsova, Brockhoff & Christensen 2017).

A term the design cannot separate from the others (carry-over in some crossover designs) is
left out, and named in ``dropped``; so are period and carry-over when a participant's
answer sets share a time (imported without one), which leaves their order unknown.

Single items answered on an ordinal scale get the cumulative link mixed model of
``analytics.statistics.ordinal`` instead (``ordinal=True``), with the same fixed effects less
the intercept (the thresholds take its place) and a random intercept per participant: the
linear model is for constructs, whose scores average several items.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgError, cho_factor, cho_solve, get_lapack_funcs
from scipy.optimize import minimize, minimize_scalar
from scipy.stats import t as student

from analytics.statistics import ordinal as ordinal_model

MIN_PARTICIPANTS = 5
METHOD = (
    "Linear mixed model (REML, fitted as lme4's lmer fits it): t tests and t intervals "
    "of the fixed effects with Satterthwaite's degrees of freedom, as lmerTest gives them"
)
UNTIMED = "period and carry-over (some answer sets of a participant share their time)"
UNMODELLED_SCENARIOS = "the scenarios' variance (one random intercept, the participant's)"
TERM_COLUMNS = ["term", "kind", "estimate", "se", "df", "ci_low", "ci_high", "statistic", "p"]
"""``statistic`` is t with Satterthwaite's ``df`` (linear model) or Wald z, ``df`` empty
(cumulative link model): the fit's ``statistic`` names which."""
FIT_COLUMNS = [
    "method", "formula", "n_scores", "n_participants", "n_scenarios", "var_participant",
    "var_scenario", "var_residual", "reml_criterion", "log_likelihood", "thresholds",
    "statistic", "dropped", "note",
]  # fmt: skip


@dataclass(frozen=True)
class MixedFit:
    fit: dict[str, object]
    """One row of ``FIT_COLUMNS``."""
    terms: pd.DataFrame
    """One row per fixed effect (``TERM_COLUMNS``)."""


def repeated(scores: pd.DataFrame) -> bool:
    """Whether some participant gave the score more than once."""
    return bool(scores["participant_id"].duplicated().any())


def with_periods(scores: pd.DataFrame) -> pd.DataFrame:
    """``period`` (1, 2, …: the answer set's place in its participant's order by
    ``answered_at``) and ``previous_system`` (None for the first)."""
    frame = scores.sort_values(["participant_id", "answered_at"], kind="stable")
    period = frame.groupby("participant_id", sort=False).cumcount() + 1
    previous = frame.groupby("participant_id", sort=False)["system_id"].shift(1)
    return frame.assign(period=period, previous_system=previous.astype(object))


LARGEST_FITTED = 3_000
"""Scores of one measure above which the report fits no mixed model unless asked
(``ozlab report --models``): each step of the fit factors a matrix as wide as the
participants and scenarios, about 2 s a measure at 3,000 scores of 600 participants and
20 s at 10,000 of 2,000 (a human evaluation rarely has more than a few hundred)."""


def mixed_model(
    scores: pd.DataFrame,
    confidence: float = 0.95,
    *,
    largest: int | None = LARGEST_FITTED,
    ordinal: bool = False,
) -> MixedFit:
    """The model of ``score`` for one measure (columns participant_id, system_id,
    scenario_id, answered_at, score); none fitted above ``largest`` scores (None: any).
    ``ordinal``: the answers are ordered categories (a single scale item), fitted by the
    cumulative link mixed model."""
    frame = scores.dropna(subset=["score", "system_id"])
    systems = sorted(frame["system_id"].astype(str).unique())
    scenarios = frame["scenario_id"].dropna().astype(str).unique()
    met = bool((frame.groupby("participant_id")["system_id"].nunique() > 1).any())
    tied = frame.duplicated(["participant_id", "answered_at"]).any()
    within = met and not bool(tied)
    fit: dict[str, object] = dict.fromkeys(FIT_COLUMNS, math.nan)
    several_scenarios = len(scenarios) > 1
    fit.update(
        method=ordinal_model.METHOD if ordinal else METHOD,
        formula=_formula(systems, within, several_scenarios and not ordinal, ordinal),
        n_scores=len(frame),
        n_participants=int(frame["participant_id"].nunique()),
        n_scenarios=len(scenarios),
        thresholds=None,
        statistic="z" if ordinal else "t",
        dropped="",
        note=None,
    )
    empty = pd.DataFrame(columns=TERM_COLUMNS)
    if len(systems) < 2:
        fit["note"] = "fewer than two systems"
        return MixedFit(fit, empty)
    if fit["n_participants"] < MIN_PARTICIPANTS:  # type: ignore[operator]
        fit["note"] = f"fewer than {MIN_PARTICIPANTS} participants"
        return MixedFit(fit, empty)
    if largest is not None and len(frame) > largest:
        fit["note"] = (
            f"not fitted: {len(frame):,} scores, over {largest:,} (the fit takes minutes at"
            " this size): ozlab report --models fits it"
        )
        return MixedFit(fit, empty)
    frame = with_periods(frame)  # only for a fit: most measures of a large study get none
    columns, names, kinds = _design(frame, systems, within)
    keep, dropped = _estimable(columns)
    x = columns[:, keep]
    aliased = ", ".join(names[i] for i in dropped)
    untimed = UNTIMED if met and not within else ""
    unmodelled = UNMODELLED_SCENARIOS if ordinal and several_scenarios else ""
    fit["dropped"] = "; ".join(
        part for part in (untimed, aliased and f"{aliased} (aliased)", unmodelled) if part
    )
    names, kinds = [names[i] for i in keep], [kinds[i] for i in keep]
    if ordinal:
        return _ordinal(frame, x, names, kinds, fit, confidence)
    found = _fit(frame, x, several_scenarios)
    if found is None:
        fit["note"] = "the model did not converge"
        return MixedFit(fit, empty)
    fit["var_participant"] = float(found.variances[0])
    fit["var_scenario"] = float(found.variances[1]) if several_scenarios else math.nan
    fit["var_residual"] = found.residual
    fit["reml_criterion"] = found.criterion
    beta = found.beta
    se, df = _satterthwaite(frame, x, fit)
    quantile = student.ppf(0.5 + confidence / 2, df)
    terms = pd.DataFrame(
        {
            "term": names,
            "kind": kinds,
            "estimate": beta,
            "se": se,
            "df": df,
            "ci_low": beta - quantile * se,
            "ci_high": beta + quantile * se,
            "statistic": beta / se,
            "p": 2 * student.sf(np.abs(beta / se), df),
        },
        columns=TERM_COLUMNS,
    )
    return MixedFit(fit, terms)


def _ordinal(
    frame: pd.DataFrame,
    x: np.ndarray,
    names: list[str],
    kinds: list[str],
    fit: dict[str, object],
    confidence: float,
) -> MixedFit:
    """The cumulative link mixed model on the linear model's design less its intercept."""
    found = ordinal_model.fit_clmm(
        frame["score"].astype(float).to_numpy(), x[:, 1:], frame["participant_id"]
    )
    if found is None:
        fit["note"] = "the model did not converge"
        return MixedFit(fit, pd.DataFrame(columns=TERM_COLUMNS))
    fit["var_participant"] = found.variance
    fit["log_likelihood"] = found.log_likelihood
    fit["thresholds"] = [float(t) for t in found.thresholds]
    terms = ordinal_model.wald(found, confidence).assign(term=names[1:], kind=kinds[1:])
    return MixedFit(fit, terms.assign(df=math.nan)[TERM_COLUMNS])


def _design(
    frame: pd.DataFrame, systems: list[str], within: bool
) -> tuple[np.ndarray, list[str], list[str]]:
    """The fixed effects' columns, their names in the researcher's words, and kinds."""
    system = frame["system_id"].astype(str).to_numpy()
    columns = [np.ones(len(frame))]
    names, kinds = [f"intercept ({systems[0]}" + (", period 1)" if within else ")")], ["intercept"]
    for other in systems[1:]:
        columns.append((system == other).astype(float))
        names.append(f"{other} − {systems[0]}")
        kinds.append("system")
    if within:
        period = frame["period"].to_numpy()
        for p in range(2, int(period.max()) + 1):
            columns.append((period == p).astype(float))
            names.append(f"period {p} − period 1")
            kinds.append("period")
        previous = frame["previous_system"].astype(object).to_numpy()
        for other in systems[1:]:
            columns.append((previous == other).astype(float))
            names.append(f"carry-over of {other}")
            kinds.append("carry-over")
    return np.column_stack(columns), names, kinds


def _satterthwaite(
    frame: pd.DataFrame, x: np.ndarray, fit: dict[str, object]
) -> tuple[np.ndarray, np.ndarray]:
    """The fixed effects' standard errors as lme4 gives them, from (X' V⁻¹ X)⁻¹ at the
    estimated variances (not from the Hessian of every parameter, the variances' included,
    which differ from lme4's in the fourth decimal), and Satterthwaite's
    degrees of freedom of each: 2·C_jj² / (g' A g), with g the derivatives of C_jj in the
    variances and A = 2·H⁻¹ their covariance, H the REML deviance's Hessian in them (both by
    central differences). A variance on its boundary (0) is no parameter of the model."""
    y = frame["score"].astype(float).to_numpy()
    blocks = []
    variances = []
    for column, name in (("participant_id", "var_participant"), ("scenario_id", "var_scenario")):
        variance = float(fit[name])  # type: ignore[arg-type]
        if math.isnan(variance) or variance <= 0:
            continue
        labels = frame[column].astype(object).fillna("(none)").astype(str)
        blocks.append(pd.get_dummies(labels).to_numpy(dtype=float))
        variances.append(variance)
    deviance = _RemlDeviance(y, x, blocks)
    at = np.array([*variances, float(fit["var_residual"])])  # type: ignore[arg-type]
    _, c = deviance(at)
    steps = 1e-4 * at
    k = len(at)
    shifted: dict[tuple[int, int, int, int], tuple[float, np.ndarray]] = {}
    for i, j in itertools.product(range(k), repeat=2):
        for a, b in itertools.product((1, -1), repeat=2):
            if i > j:  # the very point of (j, i, b, a): each variance moved on its own
                shifted[i, j, a, b] = shifted[j, i, b, a]
                continue
            point = at.copy()
            point[i] += a * steps[i]
            point[j] += b * steps[j]
            shifted[i, j, a, b] = deviance(point)
    hessian = np.empty((k, k))
    for i, j in itertools.product(range(k), repeat=2):
        f = {(a, b): shifted[i, j, a, b][0] for a, b in itertools.product((1, -1), repeat=2)}
        hessian[i, j] = (f[1, 1] - f[1, -1] - f[-1, 1] + f[-1, -1]) / (4 * steps[i] * steps[j])
    covariance = 2 * np.linalg.inv(hessian)
    # shifted[i, i, a, a] moved variance i by 2·a·step: the derivatives of C from those
    gradients = np.stack(
        [(shifted[i, i, 1, 1][1] - shifted[i, i, -1, -1][1]) / (4 * steps[i]) for i in range(k)]
    )
    diagonal = np.diag(c)
    g = np.stack([np.diag(gradient) for gradient in gradients], axis=1)  # coefficient × variance
    df = 2 * diagonal**2 / np.einsum("jk,kl,jl->j", g, covariance, g)
    return np.sqrt(diagonal), df


class _RemlDeviance:
    """The REML deviance (without its constant, as lme4's ``REMLcrit`` less (n − p)·log 2π)
    and (X' V⁻¹ X)⁻¹ at given variances (each random intercept's, then the residual's), with
    V = σ²·I + Σ σ²_k·Z_k Z_k' inverted through Woodbury's identity: the random effects'
    levels are few where the scores are many."""

    def __init__(self, y: np.ndarray, x: np.ndarray, blocks: list[np.ndarray]) -> None:
        self.y, self.x = y, x
        self.z = np.hstack(blocks) if blocks else np.zeros((len(y), 0))
        self.sizes = [b.shape[1] for b in blocks]
        self.ztz = self.z.T @ self.z

    def __call__(self, variances: np.ndarray) -> tuple[float, np.ndarray]:
        residual, n = variances[-1], len(self.y)
        d = np.repeat(variances[:-1], self.sizes)
        inner = cho_factor(np.diag(1 / d) + self.ztz / residual)

        def solve(a: np.ndarray) -> np.ndarray:
            return (a - self.z @ cho_solve(inner, self.z.T @ a) / residual) / residual

        vx, vy = solve(self.x), solve(self.y)
        information = self.x.T @ vx
        c = np.linalg.inv(information)
        r = self.y - self.x @ (c @ (self.x.T @ vy))
        log_v = n * math.log(residual) + np.log(d).sum() + 2 * np.log(np.diag(inner[0])).sum()
        deviance = log_v + np.linalg.slogdet(information)[1] + r @ solve(r)
        return float(deviance), c


def _estimable(columns: np.ndarray) -> tuple[list[int], list[int]]:
    """Columns kept in order while each adds rank; the others are aliased (dropped)."""
    keep: list[int] = []
    dropped: list[int] = []
    for j in range(columns.shape[1]):
        trial = columns[:, [*keep, j]]
        if np.linalg.matrix_rank(trial) == len(keep) + 1:
            keep.append(j)
        else:
            dropped.append(j)
    return keep, dropped


@dataclass(frozen=True)
class _Reml:
    """The REML estimates: fixed effects, each random intercept's variance, the residual's,
    and lme4's REML criterion."""

    beta: np.ndarray
    variances: np.ndarray
    residual: float
    criterion: float


class _ProfiledDeviance:
    """lme4's profiled REML deviance as a function of each random intercept's standard
    deviation relative to the residual's (θ ≥ 0; Bates et al. 2015, eqs. 34 and 42), from
    the cross-products alone: each evaluation factors a matrix of the random effects'
    levels and one of the fixed effects, whatever the number of scores."""

    def __init__(self, y: np.ndarray, x: np.ndarray, blocks: list[np.ndarray]) -> None:
        z = np.hstack(blocks)
        self.sizes = [b.shape[1] for b in blocks]
        self.ztz, self.ztxy = z.T @ z, z.T @ np.column_stack([x, y])
        self.xtx, self.xty, self.yty = x.T @ x, x.T @ y, float(y @ y)
        self.nu = len(y) - x.shape[1]  # n − p: REML's degrees of freedom

    def __call__(self, theta: np.ndarray) -> float:
        return self.fit(theta).criterion

    def fit(self, theta: np.ndarray) -> _Reml:
        scale = np.repeat(np.asarray(theta, dtype=float), self.sizes)
        inner = np.linalg.cholesky(scale[:, None] * self.ztz * scale + np.eye(len(scale)))
        ab = _lower_solved(inner, scale[:, None] * self.ztxy)  # L⁻¹ Λ Z' [X y]
        a, b = ab[:, :-1], ab[:, -1]
        information = _upper_cholesky(self.xtx - a.T @ a)
        xvy = self.xty - a.T @ b
        beta = _cholesky_solved(information, xvy)
        squares = max(self.yty - float(b @ b) - float(xvy @ beta), 1e-300)  # r' V₀⁻¹ r
        residual = squares / self.nu
        criterion = (
            2 * np.log(np.diag(inner)).sum()
            + 2 * np.log(np.diag(information)).sum()
            + self.nu * (1 + math.log(2 * math.pi * residual))
        )
        return _Reml(beta, np.asarray(theta) ** 2 * residual, residual, float(criterion))


_TRTRS, _POTRF, _POTRS = cast(
    "list[Callable[..., tuple[np.ndarray, int]]]",
    get_lapack_funcs(("trtrs", "potrf", "potrs"), (np.ones((1, 1)),)),
)
"""LAPACK's routines for float64, called as ``scipy.linalg``'s ``solve_triangular``,
``cho_factor`` and ``cho_solve`` (``check_finite=False``) call them, without their checks
and batching of arguments: those took three times the solve of a profiled deviance's small
matrices, evaluated some 500 times a small report. The same routines on the same arrays:
the same numbers."""


def _lower_solved(lower: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``solve_triangular(lower, b, lower=True)``: as the lower triangle's transpose when it
    is laid out by rows (numpy's Cholesky factor), as scipy solves it."""
    if lower.flags.f_contiguous:
        x, info = _TRTRS(lower, b, overwrite_b=False, lower=True, trans=0, unitdiag=False)
    else:
        x, info = _TRTRS(lower.T, b, overwrite_b=False, lower=False, trans=1, unitdiag=False)
    if info > 0:
        raise LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    return x


def _upper_cholesky(a: np.ndarray) -> np.ndarray:
    """``cho_factor(a)[0]``: the upper Cholesky factor (the lower triangle left as it was)."""
    c, info = _POTRF(a, lower=False, overwrite_a=False, clean=False)
    if info > 0:
        raise LinAlgError(f"{info}-th leading minor of the array is not positive definite")
    return c


def _cholesky_solved(upper: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``cho_solve((upper, False), b)``."""
    x, _ = _POTRS(upper, b, lower=False, overwrite_b=False)
    return x


LARGEST_THETA = 1e4
"""The relative standard deviation searched up to: a random intercept 10,000 times the
residual's spread is no estimate a study's scores could give."""


BOUNDARY = 1e-9
"""How much lower a REML criterion must be for a variance to count as above 0 (lme4's
optimiser stops on the bound; a gradient method only approaches it)."""


def _snapped(deviance: _ProfiledDeviance, theta: np.ndarray) -> np.ndarray:
    """``theta`` with each relative standard deviation put on its bound, 0, where the
    deviance is no worse there: a variance of 1e-22 is lme4's 0."""
    theta = np.asarray(theta, dtype=float).copy()
    current = deviance(theta)
    for i in np.argsort(theta):
        trial = theta.copy()
        trial[i] = 0.0
        value = deviance(trial)
        if value <= current + BOUNDARY:
            theta, current = trial, value
    return theta


def _derivatives(
    deviance: _ProfiledDeviance, theta: np.ndarray, free: np.ndarray, centre: float
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and Hessian of ``deviance`` in ``theta[free]`` by central differences
    (``centre``: its value at ``theta``)."""
    h = 1e-4 * np.maximum(theta[free], 1e-2)

    def at(*moves: tuple[int, int]) -> float:
        point = theta.copy()
        for i, sign in moves:
            point[free[i]] += sign * h[i]
        return deviance(point)

    plus = np.array([at((i, 1)) for i in range(len(free))])
    minus = np.array([at((i, -1)) for i in range(len(free))])
    hessian = np.diag((plus - 2 * centre + minus) / h**2)
    for i, j in itertools.combinations(range(len(free)), 2):
        corners = at((i, 1), (j, 1)) - at((i, 1), (j, -1)) - at((i, -1), (j, 1))
        hessian[i, j] = hessian[j, i] = (corners + at((i, -1), (j, -1))) / (4 * h[i] * h[j])
    return (plus - minus) / (2 * h), hessian


def _polished(deviance: _ProfiledDeviance, theta: np.ndarray, rounds: int = 3) -> np.ndarray:
    """``theta`` after Newton's steps in the relative standard deviations above 0: a
    gradient method creeps over the last decimals (about 200 evaluations of the deviance a
    crossed fit), which Newton's method takes in a step or two (9 evaluations each). A step
    that does not lower the deviance is not taken."""
    theta = np.asarray(theta, dtype=float).copy()
    free = np.flatnonzero(theta > 0)
    best = deviance(theta)
    for _ in range(rounds if len(free) else 0):
        gradient, hessian = _derivatives(deviance, theta, free, best)
        try:
            np.linalg.cholesky(hessian)  # the curvature of a minimum, or no Newton step
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            break
        trial = theta.copy()
        trial[free] = np.maximum(theta[free] - step, 0.0)
        value = deviance(trial)
        if not value < best:
            break
        theta, best = trial, value
    return theta


def _fit(frame: pd.DataFrame, x: np.ndarray, several_scenarios: bool) -> _Reml | None:
    """The REML fit with the variances of participants and then scenarios, as lme4 fits
    it: the profiled deviance minimised over the relative standard deviations, bounded
    below by 0 (a variance may be estimated as 0, as lme4 reports it)."""
    people = frame["participant_id"].astype(str)
    y = frame["score"].astype(float).to_numpy()
    blocks = [pd.get_dummies(people).to_numpy(dtype=float)]
    alone = _ProfiledDeviance(y, x, blocks)
    try:
        found = minimize_scalar(
            lambda t: alone(np.array([t])),
            bounds=(0.0, LARGEST_THETA),
            method="bounded",
            options={"xatol": 1e-10},
        )
        theta = _snapped(alone, np.array([found.x]))
        best = alone.fit(theta)
        if not several_scenarios:
            return best
        scenario = frame["scenario_id"].astype(object).fillna("(none)").astype(str)
        blocks.append(pd.get_dummies(scenario).to_numpy(dtype=float))
        crossed = _ProfiledDeviance(y, x, blocks)
        better = minimize(
            crossed,
            [max(float(theta[0]), 0.1), 0.1],
            method="L-BFGS-B",
            jac="3-point",  # central differences: precise enough for the df taken at the optimum
            bounds=[(0.0, LARGEST_THETA)] * 2,
            options={"ftol": 1e-12, "gtol": 1e-6},
        )
        both = _snapped(crossed, _polished(crossed, better.x))
        if crossed(both) < best.criterion - BOUNDARY:
            return crossed.fit(both)
        return _Reml(best.beta, np.array([*best.variances, 0.0]), best.residual, best.criterion)
    except np.linalg.LinAlgError:
        return None


def _formula(systems: list[str], within: bool, scenarios: bool, ordinal: bool = False) -> str:
    """The model in words, for the report."""
    fixed = "system" + (
        " + period + carry-over (the previous answer set's system)" if within else ""
    )
    random = "a random intercept per participant" + (
        " and one per scenario (crossed)" if scenarios else ""
    )
    model = f"logit P(answer ≤ j) = threshold j − ({fixed})" if ordinal else f"score ~ {fixed}"
    return f"{model}, with {random}; {systems[0]} is the reference system"
