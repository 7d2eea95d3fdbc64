"""The statistics of pairwise votes, from the votes frame to tidy tables per question.

Every judgement is a row of the votes frame (``analytics.data.votes.VOTE_COLUMNS``). Each
question (side by side's ``turn``, a preference item, an ACUTE question) is fitted on its
own. Kept out of every fit, and counted: flagged votes (a system named itself),
onboarding pairs, votes where a side failed (``not_comparable``), votes with one system on
both sides, and by default "both bad" votes (``both_bad="tie"`` counts them as ties).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special

from analytics.data.loading import StudyData
from analytics.statistics.pairwise import summaries
from analytics.statistics.pairwise.fitting import (
    Estimability,
    TieModel,
    count_battles,
    design,
    estimability,
)
from analytics.statistics.pairwise.ranking import ELO, scores, wins_only
from bot.core.vocabulary import FlagReason

WINNERS = ("a", "b", "tie", "both_bad", "not_comparable")
BothBad = Literal["exclude", "tie"]
Strength = Literal["ignore", "graded"]
FEW_RATERS = 10
"""Below this many raters the report warns that the rater-clustered intervals are rough."""

SCORE_COLUMNS = [
    "question", "system", "anchor", "comparisons", "wins", "losses", "ties", "log_strength",
    "boot_low", "boot_high", "sandwich_low", "sandwich_high", "se_sandwich", "se_model",
    "elo", "elo_boot_low", "elo_boot_high", "elo_sandwich_low", "elo_sandwich_high", "rank",
    "rank_worst",
]  # fmt: skip
PARAMETER_COLUMNS = [
    "question", "parameter", "estimate", "boot_low", "boot_high", "sandwich_low",
    "sandwich_high", "se_sandwich", "se_model", "probability", "probability_low",
    "probability_high",
]  # fmt: skip
COUNT_COLUMNS = [
    "question", "sources", "votes", "fitted", "raters", "systems", "ties", "tie_rate",
    "both_bad", "both_bad_rate", "not_comparable", "flagged", "flag_reasons", "onboarding",
    "same_system", "model", "anchor", "identified", "estimator", "rounds", "converged_rounds",
]  # fmt: skip


@dataclass(frozen=True)
class PairwiseOptions:
    """The protocol's choices for the statistics; the defaults are docs/pairwise.md's."""

    ties: TieModel = "half"
    both_bad: BothBad = "exclude"
    strength: Strength = "ignore"
    """``ignore``: a win is a win, whatever its strength; ``graded``: a preference item's
    "slightly" counts ``slightly`` of a win and the rest for the other side (half ties only)."""
    slightly: float = 0.75
    anchor: str | None = None
    """The system whose log-strength is 0 (and Elo score ``anchor_score``); by default the
    first of the study's systems that has votes."""
    anchor_score: float = 1000.0
    rounds: int = 1000
    seed: int = 0
    level: float = 0.95
    position: bool = True
    """Estimate a "shown first" term."""
    onboarding_threshold: float = 0.75
    alpha: float = 0.05
    power: float = 0.8

    def __post_init__(self) -> None:
        if self.strength == "graded" and self.ties != "half":
            raise ValueError("a graded strength needs ties as half a win (ties: half)")
        if not 0.5 <= self.slightly <= 1:
            raise ValueError(f"slightly must be from 0.5 (a tie) to 1 (a win), not {self.slightly}")

    @property
    def graded(self) -> float | None:
        """The share of a win a "slightly" preference counts; None: strength is ignored."""
        return self.slightly if self.strength == "graded" else None


@dataclass(frozen=True)
class Pairwise:
    """Every number of the pairwise section, tidy, one table per kind, a question column."""

    options: PairwiseOptions
    counts: pd.DataFrame
    scores: pd.DataFrame
    parameters: pd.DataFrame
    win_rates: pd.DataFrame
    pairs: pd.DataFrame
    raters: pd.DataFrame
    onboarding: pd.DataFrame
    sample_size: pd.DataFrame
    methods: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def methods(options: PairwiseOptions) -> dict[str, str]:
    """What each number is, in one sentence each (the JSON's ``methods``)."""
    ties = (
        "ties count as half a win for each side (the binomial likelihood of wins + ties/2)"
        if options.ties == "half"
        else "ties by Davidson's (1970) model, P(tie) ∝ ν·√(π_i·π_j), ν estimated"
    )
    both_bad = (
        "'both bad' votes are left out of the fit and counted"
        if options.both_bad == "exclude"
        else "'both bad' votes count as ties"
    )
    level = f"{100 * options.level:g}%"
    strength = (
        "a preference's strength ('much', 'slightly') is not used: a win is a win"
        if options.graded is None
        else (
            "a preference's strength grades the vote: 'much' a whole win, 'slightly' "
            f"{options.graded:g} of a win and {1 - options.graded:g} for the other side, no "
            "preference a tie (the share won as a fractional outcome of the same binomial "
            "likelihood, a quasi-likelihood; R's glm(family = quasibinomial) gives the same "
            "estimates)"
        )
    )
    return {
        "model": (
            "Bradley–Terry by maximum likelihood (scipy.optimize trust-region Newton), "
            f"log-odds(first preferred) = β_first − β_second + γ; {ties}; {both_bad}; "
            f"{strength}"
        ),
        "scale": (
            "log_strength is β (natural log of the strength), the anchor's 0; elo is "
            f"{options.anchor_score:g} + β · 400/ln 10 ({ELO:.4f}), so 400 points are odds of "
            + (
                "10 to 1 in a decisive vote (ties apart)"
                if options.ties == "davidson"
                else "10 to 1 of the share won with a tie as half a win (in decisive votes "
                "alone the odds are longer when there are ties)"
            )
            + "; every interval is relative to the anchor"
        ),
        "bootstrap": (
            f"{level} percentile interval over {options.rounds:,} rounds resampling whole "
            f"raters with replacement (numpy PCG64, seed {options.seed}); a round has a "
            "finite estimate when its Newton steps shrink to nothing; one without (a system "
            "winning or losing every comparison in the round) counts at the end its "
            "parameters go to, found by linear programming (Konis 2007), or at both ends "
            "for one it leaves undetermined, so that an end more than "
            f"{100 * (1 - options.level) / 2:g}% of the rounds reach is unbounded"
        ),
        "separation": (
            "before any fit: a comparison graph in groups that never met gets no score, "
            "only wins and the order they give; when the maximum-likelihood estimate is "
            "infinite (separation, found by linear programming; Albert & Anderson 1984) the "
            "scores are Firth's (1993) bias-reduced estimates, the likelihood penalised by "
            "½·log det I (Jeffreys' prior; R's BTm(br = TRUE)), finite and pulled towards "
            "each other, refitted the same way in every bootstrap round, without a sandwich "
            "interval, ranked by the wins alone"
        ),
        "sandwich": (
            f"{level} normal interval with the sandwich (robust) standard error clustered "
            "by rater, H⁻¹(Σ g_r g_rᵀ)H⁻¹, no small-sample factor (geepack's)"
        ),
        "rank": (
            "1 + the number of systems whose bootstrap lower bound is above this one's upper "
            "bound (Chatbot Arena's); rank_worst: the number of systems minus those whose "
            "upper bound is below this one's lower bound"
        ),
        "shown_first": (
            "γ, the log-odds advantage of the system shown first (A, left, met first); "
            "probability: how often the first of two equal systems would be preferred "
            "(ties as half), 0.5 for no position effect"
        ),
        "win_rate": "wins + ties/2 over comparisons, either side shown first",
        "agreement": summaries.AGREEMENT_METHOD,
        "onboarding": (
            "onboarding pairs with a known answer, never in a fit; passed: a rate of at "
            f"least {options.onboarding_threshold:g}"
        ),
        "sample_size": (
            "comparisons of one pair for a two-sided exact binomial (sign) test of its "
            f"decisive votes, ties left out (α = {options.alpha:g}, power {options.power:g}, "
            "the smallest n with that exact power), to show the better of two systems "
            "adjacent in the ranking is preferred, at the rate the fitted model gives it in "
            "a decisive vote (no position effect; "
            + (
                "Davidson's π_i/(π_i + π_j)), over the share of votes the model expects "
                "to be decisive"
                if options.ties == "davidson"
                else "with ties as half a win the model's share σ(Δ) counts a tie as half, "
                "so the decisive rate is ½ + (σ(Δ) − ½)/(1 − t), t the question's tie "
                "share), over the share of votes that were decisive"
            )
            + "; votes taken as independent, so with few raters more are needed"
        ),
    }


def study_options(data: StudyData) -> tuple[PairwiseOptions, tuple[str, ...]]:
    """The options the study files' ``pairwise:`` choose, and a note when the snapshot's
    studies choose differently (the first study's choices are then used)."""
    chosen = [bundle.study.pairwise for bundle in data.bundles.values()]
    if not chosen:
        return PairwiseOptions(), ()
    first = chosen[0]
    options = PairwiseOptions(
        ties=first.ties,
        both_bad=first.both_bad,
        strength=first.strength,
        slightly=first.slightly,
        anchor=first.anchor,
        anchor_score=first.anchor_score,
        rounds=first.bootstrap_rounds,
        seed=first.seed,
    )
    if any(other != first for other in chosen[1:]):
        studies = ", ".join(data.bundles)
        return options, (
            f"The studies ({studies}) choose different pairwise options; the first "
            "study's are used.",
        )
    return options, ()


def pairwise_from_study(data: StudyData, systems: tuple[str, ...]) -> Pairwise | None:
    """The report's pairwise section from the snapshot's votes, with the choices of the
    study file's ``pairwise:``; None without votes."""
    if data.votes.empty:
        return None
    options, notes = study_options(data)
    found = pairwise_section(data.votes, systems, options)
    return replace(found, notes=(*notes, *found.notes)) if notes else found


def flag_counts(votes: pd.DataFrame) -> dict[str, int]:
    """The flagged votes by reason (``FlagReason``, in its order; a reason no code of
    ozlab knows, from an import, after them), only the reasons found."""
    flagged = votes[votes["flagged"].astype(bool)]
    given = flagged["flag_reason"] if "flag_reason" in flagged else pd.Series(index=flagged.index)
    reasons = given.astype(object).fillna("unknown").astype(str)
    counted = reasons.value_counts()
    order = {reason.value: at for at, reason in enumerate(FlagReason)}
    found = sorted(counted.index, key=lambda r: (order.get(r, len(order)), r))
    return {str(r): int(counted[r]) for r in found}


def _fit_rows(votes: pd.DataFrame, options: PairwiseOptions) -> tuple[pd.Series, pd.DataFrame]:
    """Which votes a fit may use, and the votes with 'both bad' made ties if so chosen."""
    votes = votes.copy()
    if options.both_bad == "tie":
        votes["winner"] = votes["winner"].replace("both_bad", "tie")
    usable = (
        ~votes["flagged"].astype(bool)
        & ~votes["onboarding"].astype(bool)
        & votes["winner"].isin(["a", "b", "tie"])
        & (votes["system_a"] != votes["system_b"])
    )
    return usable, votes


def pairwise_section(
    votes: pd.DataFrame,
    systems: tuple[str, ...] = (),
    options: PairwiseOptions | None = None,
) -> Pairwise:
    """Every question's fit and tables; ``systems`` gives the order systems are listed
    and the default anchor (the study's declared order), others follow by name."""
    options = options or PairwiseOptions()
    votes = votes.astype({"question": str, "system_a": str, "system_b": str, "rater": str})
    both_bad = votes["winner"] == "both_bad"
    usable, votes = _fit_rows(votes, options)
    fitted = votes[usable]
    notes: list[str] = []
    counts, score_tables, parameter_tables, sample_tables = [], [], [], []
    pairs = summaries.pair_counts(fitted)
    for question, mine in votes.groupby("question", sort=True):
        question = str(question)
        used = mine[usable.loc[mine.index]]
        present = set(used["system_a"]) | set(used["system_b"])
        order = tuple(s for s in systems if s in present) + tuple(sorted(present - set(systems)))
        anchor = options.anchor if options.anchor in present else (order[0] if order else None)
        raters = int(used["rater"].nunique())
        row: dict[str, object] = {
            "question": question,
            "sources": ", ".join(sorted(set(mine["source"].astype(str)))),
            "votes": len(mine),
            "fitted": len(used),
            "raters": raters,
            "systems": len(order),
            "ties": int((used["winner"] == "tie").sum()),
            "tie_rate": float((used["winner"] == "tie").mean()) if len(used) else np.nan,
            "both_bad": int(both_bad.loc[mine.index].sum()),
            "both_bad_rate": float(both_bad.loc[mine.index].mean()),
            "not_comparable": int((mine["winner"] == "not_comparable").sum()),
            "flagged": int(mine["flagged"].astype(bool).sum()),
            "flag_reasons": flag_counts(mine),
            "onboarding": int(mine["onboarding"].astype(bool).sum()),
            "same_system": int((mine["system_a"] == mine["system_b"]).sum()),
            "model": _model_name(options),
            "anchor": anchor,
            "identified": False,
            "rounds": options.rounds,
            "converged_rounds": 0,
        }
        if len(order) < 2 or anchor is None:
            notes.append(f"{question}: fewer than two systems compared, nothing to fit.")
            counts.append(row)
            continue
        battles = count_battles(used, order, slightly=options.graded)
        found = estimability(battles, battles.totals(), options.ties)
        row["identified"] = found.connected and not found.separated
        if not found.connected:
            notes.append(_disconnected(question, found))
            row["estimator"] = None
            counts.append(row)
            score_tables.append(
                wins_only(battles).assign(question=question).reindex(columns=SCORE_COLUMNS)
            )
            continue
        position = options.position and found.position
        if options.position and not found.position:
            notes.append(
                f"{question}: every pair was shown in one order only, so being shown first "
                "cannot be told apart from the systems; fitted without the shown-first term."
            )
        model = design(battles, order.index(anchor), options.ties, position=position)
        penalised = found.separated
        if penalised:
            notes.append(_separated(question, options))
        row["estimator"] = "firth" if penalised else "maximum_likelihood"
        fitted_scores = scores(
            battles,
            model,
            rounds=options.rounds,
            seed=options.seed,
            level=options.level,
            anchor_score=options.anchor_score,
            penalised=penalised,
        )
        if raters < FEW_RATERS:
            notes.append(
                f"{question}: only {raters} rater{'' if raters == 1 else 's'}; intervals that "
                f"resample raters and the sandwich need many more (at least {FEW_RATERS}) to "
                "be trusted."
            )
        row["converged_rounds"] = fitted_scores.converged_rounds
        counts.append(row)
        ranked = fitted_scores.systems.assign(question=question)
        score_tables.append(ranked[SCORE_COLUMNS])
        parameter_tables.append(_with_probabilities(fitted_scores.parameters, question))
        if not penalised:
            sample_tables.append(
                summaries.sample_size(
                    question,
                    ranked,
                    pairs,
                    _decisive(
                        options, fitted_scores.parameters, float(used["winner"].eq("tie").mean())
                    ),
                    alpha=options.alpha,
                    power=options.power,
                )
            )
    return Pairwise(
        options=options,
        counts=pd.DataFrame(counts, columns=COUNT_COLUMNS),
        scores=_stack(score_tables, SCORE_COLUMNS),
        parameters=_stack(parameter_tables, PARAMETER_COLUMNS),
        win_rates=summaries.win_rates(fitted),
        pairs=pairs,
        raters=summaries.rater_agreement(fitted),
        onboarding=summaries.onboarding(votes, options.onboarding_threshold),
        sample_size=_stack(sample_tables, summaries.SAMPLE_COLUMNS),
        methods=methods(options),
        notes=tuple(notes),
    )


def _decisive(
    options: PairwiseOptions, parameters: pd.DataFrame, tie_rate: float
) -> Callable[[float], tuple[float, float]]:
    """For a gap Δ in log-strength (no position effect): the rate at which the better
    system wins a decisive vote, and the share of ties. Davidson's model gives both
    (π_i/(π_i + π_j) and ν/(e^{Δ/2} + e^{−Δ/2} + ν)); with ties as half a win, σ(Δ) is the
    share won counting a tie as half, so with the question's tie share t the decisive rate
    is ½ + (σ(Δ) − ½)/(1 − t)."""
    if options.ties == "davidson":
        log_nu = parameters.set_index("parameter")["estimate"].astype(float)["tie_log_nu"]
        nu = float(np.exp(log_nu))

        def davidson(gap: float) -> tuple[float, float]:
            return float(special.expit(gap)), nu / (np.exp(gap / 2) + np.exp(-gap / 2) + nu)

        return davidson
    ties = 0.0 if not np.isfinite(tie_rate) else tie_rate

    def half(gap: float) -> tuple[float, float]:
        share = float(special.expit(gap))
        rate = 0.5 + (share - 0.5) / (1 - ties) if ties < 1 else 0.5
        return min(max(rate, 0.0), 1.0), ties

    return half


def _disconnected(question: str, found: Estimability) -> str:
    groups = "; ".join(", ".join(group) for group in found.groups)
    return (
        f"{question}: the systems fall into {len(found.groups)} groups that were never "
        f"compared with each other ({groups}), so no model puts them on one scale and no "
        "Bradley–Terry score is given; the ranks are the order the wins give (a system above "
        "another beat it, directly or through others), the win rates below are the data."
    )


def _separated(question: str, options: PairwiseOptions) -> str:
    level = f"{100 * options.level:g}%"
    return (
        f"{question}: the maximum-likelihood estimate does not exist (a system won or lost "
        "every comparison with the rest, or the system shown first won every vote"
        + (
            "; with Davidson's ties also: no vote, or every vote, was a tie, or a system "
            "won or tied every comparison"
            if options.ties == "davidson"
            else ""
        )
        + "), so the scores are Firth's bias-reduced estimates: the likelihood penalised by "
        "Jeffreys' prior (½·log det I, R's BTm(br = TRUE)). They are finite where the "
        "maximum-likelihood ones are infinite and pulled towards each other, so a gap reads "
        f"as at least that large; the {level} bootstrap refits them the same way, there is "
        "no sandwich interval, and the ranks are the order the wins give."
    )


def _model_name(options: PairwiseOptions) -> str:
    if options.ties == "davidson":
        return "davidson"
    return "bradley_terry_half_ties" + ("_graded_strength" if options.graded else "")


def _with_probabilities(parameters: pd.DataFrame, question: str) -> pd.DataFrame:
    """The shown-first term also as the share of wins the first of two equals would get."""
    table = parameters.assign(question=question)
    position = table["parameter"] == "shown_first"

    def logistic(values: pd.Series) -> pd.Series:
        return pd.Series(special.expit(values.astype(float).to_numpy()), index=values.index)

    table["probability"] = logistic(table["estimate"]).where(position)
    table["probability_low"] = logistic(table["boot_low"]).where(position)
    table["probability_high"] = logistic(table["boot_high"]).where(position)
    return table[PARAMETER_COLUMNS]


def _stack(tables: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    if not tables:
        return pd.DataFrame(columns=columns)
    return pd.concat(tables, ignore_index=True)[columns]
