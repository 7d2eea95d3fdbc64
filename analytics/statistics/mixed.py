"""Repeated measures: a linear mixed model of a score when participants gave it several
times (several tasks, or several systems within participants).

One row per answer set (a session's questionnaire, an imported form): the score, its
participant, system, scenario and time. The model (statsmodels ``MixedLM``, REML, as R's
``lme4::lmer(..., REML = TRUE)`` fits it; tests/r/mixed_idial.R):

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
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve
from scipy.stats import t as student

from analytics.statistics import ordinal as ordinal_model

MIN_PARTICIPANTS = 5
METHOD = (
    "Linear mixed model (statsmodels MixedLM, REML, as lme4's lmer): t tests and t intervals "
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
(``ozlab report --models``): statsmodels' REML fit loops over participants in Python and
fits crossed scenarios as one dense group, seconds to minutes a measure at 10,000 scores
(a human evaluation rarely has more than a few hundred)."""


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
    result, fit["var_participant"], fit["var_scenario"] = found
    fit["var_residual"] = float(result.scale)
    fit["reml_criterion"] = -2 * float(result.llf)
    beta = np.asarray(result.fe_params)
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
    estimated variances (statsmodels' own come from the Hessian of every parameter, the
    variances' included, and differ from lme4's in the fourth decimal), and Satterthwaite's
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
    shifted = {}
    for i, j in itertools.product(range(k), repeat=2):
        for a, b in itertools.product((1, -1), repeat=2):
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


def _fit(frame: pd.DataFrame, x: np.ndarray, several_scenarios: bool) -> Any:
    """The REML fit with the variances of participants and scenarios (NaN: not in the
    model), or None. A variance lme4 puts on the boundary (0) statsmodels only approaches,
    as it optimises its logarithm: when the crossed model is no better than the model
    without scenarios, the scenarios' variance is 0 and the simpler fit is the answer."""
    people = frame["participant_id"].astype(str).to_numpy()
    y = frame["score"].astype(float).to_numpy()
    alone = _best(_participants_model(y, x, people))
    if not several_scenarios:
        return None if alone is None else (alone, float(np.asarray(alone.cov_re)[0, 0]), math.nan)
    scenario = frame["scenario_id"].astype(object).fillna("(none)").astype(str).to_numpy()
    floor = -math.inf if alone is None else float(alone.llf)
    crossed = _best(_crossed_model(y, x, {"participant": people, "scenario": scenario}), floor)
    if crossed is not None and (alone is None or crossed.llf > alone.llf + 1e-7):
        variances = dict(zip(crossed.model.exog_vc.names, np.asarray(crossed.vcomp), strict=True))
        return crossed, float(variances["participant"]), float(variances["scenario"])
    return None if alone is None else (alone, float(np.asarray(alone.cov_re)[0, 0]), 0.0)


def _participants_model(y: np.ndarray, x: np.ndarray, people: np.ndarray) -> Any:
    from statsmodels.regression.mixed_linear_model import MixedLM

    return MixedLM(y, x, groups=pd.factorize(people)[0], exog_re=np.ones((len(y), 1)))


def _crossed_model(y: np.ndarray, x: np.ndarray, factors: dict[str, np.ndarray]) -> Any:
    """Crossed random intercepts: one group holding everything, a variance component each."""
    from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec

    names, columns, levels = [], [], []
    for name, labels in factors.items():
        values = sorted(set(labels))
        names.append(name)
        columns.append([np.column_stack([(labels == v).astype(float) for v in values])])
        levels.append([values])
    return MixedLM(y, x, groups=np.zeros(len(y)), exog_vc=VCSpec(names, levels, columns))


def _best(model: Any, floor: float | None = None) -> Any:
    """The REML fit, or None. Without ``floor``: BFGS to a tight gradient (it agrees with
    lme4 to 1e-8), Powell's method when BFGS stops short. With ``floor`` (the likelihood of
    the model without this one's last variance): Powell first, quick and closest to a
    boundary; no better than ``floor`` means the variance is on the boundary (the simpler
    model is the answer), otherwise BFGS refines Powell's estimate."""
    tight = {"method": ["bfgs"], "gtol": 1e-12}
    first = _attempt(model, tight if floor is None else {"method": ["powell"]})
    if first is None or (floor is not None and first.llf <= floor + 1e-7):
        return first
    if floor is None and first.converged:
        return first
    if floor is None:
        second = _attempt(model, {"method": ["powell"]})
    else:
        second = _attempt(model, {**tight, "start_params": first.params_object})
    fits = [f for f in (first, second) if f is not None]
    return max(fits, key=lambda r: r.llf)


def _attempt(model: Any, options: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # boundary and convergence warnings: judged here
        try:
            result = model.fit(reml=True, **options)
        except (np.linalg.LinAlgError, ValueError):
            return None
    ok = np.isfinite(result.llf) and np.all(np.isfinite(result.fe_params))
    return result if ok else None


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
