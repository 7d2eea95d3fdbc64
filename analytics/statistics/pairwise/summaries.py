"""What the votes say before any model: win rates, comparisons per pair, raters'
agreement with the majority, annotators' onboarding, and how many comparisons would
separate two systems.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

WIN_RATE_COLUMNS = [
    "question", "system", "opponent", "comparisons", "wins", "losses", "ties", "win_rate",
]  # fmt: skip
PAIR_COLUMNS = [
    "question", "system_1", "system_2", "comparisons", "system_1_first", "system_2_first",
    "system_1_wins", "system_2_wins", "ties", "tie_rate",
]  # fmt: skip
RATER_COLUMNS = ["question", "rater", "rater_kind", "votes", "decisive", "scored", "agreed",
                 "agreement"]  # fmt: skip
ONBOARDING_COLUMNS = ["rater", "pairs", "correct", "rate", "passed"]
SAMPLE_COLUMNS = [
    "question", "system", "opponent", "win_probability", "tie_share", "decisive_needed",
    "needed_per_pair", "comparisons",
]  # fmt: skip
"""``win_probability``: the rate at which the better system wins a decisive vote (not a
tie) by the fitted model; ``tie_share``: the share of votes that are ties."""

AGREEMENT_METHOD = (
    "a rater's decisive vote (not a tie) agrees when the other raters' decisive votes on "
    "the same pair and question favour the same system; a vote whose pair the others split "
    "evenly, or that nobody else judged, is not scored"
)


def _sided(fitted: pd.DataFrame) -> pd.DataFrame:
    """Each vote twice, once from each system's side: win, loss or tie."""
    first = pd.DataFrame(
        {
            "question": fitted["question"],
            "system": fitted["system_a"],
            "opponent": fitted["system_b"],
            "win": fitted["winner"] == "a",
            "loss": fitted["winner"] == "b",
            "tie": fitted["winner"] == "tie",
        }
    )
    second = first.assign(
        system=fitted["system_b"], opponent=fitted["system_a"], win=first["loss"],
        loss=first["win"],
    )  # fmt: skip
    return pd.concat([first, second], ignore_index=True)


def win_rates(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question, system and opponent: wins, losses, ties and the win rate with ties
    as half a win (the matrix of the heat map)."""
    if fitted.empty:
        return pd.DataFrame(columns=WIN_RATE_COLUMNS)
    sided = _sided(fitted)
    grouped = sided.groupby(["question", "system", "opponent"], sort=True, observed=True)
    table = grouped.agg(wins=("win", "sum"), losses=("loss", "sum"), ties=("tie", "sum"))
    table = table.reset_index()
    table["comparisons"] = table["wins"] + table["losses"] + table["ties"]
    table["win_rate"] = (table["wins"] + table["ties"] / 2) / table["comparisons"]
    return table[WIN_RATE_COLUMNS]


def pair_counts(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question and unordered pair (names in sorted order): comparisons, how often each
    was shown first, wins and ties."""
    if fitted.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    a, b = fitted["system_a"].astype(str), fitted["system_b"].astype(str)
    swapped = a > b
    one, two = a.where(~swapped, b), b.where(~swapped, a)
    winner = fitted["winner"]
    frame = pd.DataFrame(
        {
            "question": fitted["question"],
            "system_1": one,
            "system_2": two,
            "first_1": ~swapped,
            "wins_1": (winner == "a") & ~swapped | (winner == "b") & swapped,
            "wins_2": (winner == "b") & ~swapped | (winner == "a") & swapped,
            "tie": winner == "tie",
        }
    )
    grouped = frame.groupby(["question", "system_1", "system_2"], sort=True)
    table = grouped.agg(
        comparisons=("tie", "size"),
        system_1_first=("first_1", "sum"),
        system_1_wins=("wins_1", "sum"),
        system_2_wins=("wins_2", "sum"),
        ties=("tie", "sum"),
    ).reset_index()
    table["system_2_first"] = table["comparisons"] - table["system_1_first"]
    table["tie_rate"] = table["ties"] / table["comparisons"]
    return table[PAIR_COLUMNS]


def rater_agreement(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question and rater: how often the rater's decisive votes agree with the majority
    of the other raters (``AGREEMENT_METHOD``)."""
    if fitted.empty:
        return pd.DataFrame(columns=RATER_COLUMNS)
    decisive = fitted[fitted["winner"].isin(["a", "b"])]
    won = decisive["system_a"].where(decisive["winner"] == "a", decisive["system_b"])
    lost = decisive["system_b"].where(decisive["winner"] == "a", decisive["system_a"])
    votes = pd.DataFrame(
        {
            "question": decisive["question"],
            "rater": decisive["rater"],
            "won": won.astype(str),
            "lost": lost.astype(str),
        }
    )
    keys = ["question", "won", "lost"]
    everyone = votes.groupby(keys).size().rename("all_for")
    own = votes.groupby(["rater", *keys]).size().rename("own_for")
    votes = votes.join(everyone, on=keys).join(own, on=["rater", *keys])
    # the votes the other way round: the same index looked up with won and lost swapped
    votes = votes.join(everyone.rename("all_against"), on=["question", "lost", "won"])
    votes = votes.join(own.rename("own_against"), on=["rater", "question", "lost", "won"])
    votes = votes.fillna({"all_against": 0, "own_against": 0})
    others_for = votes["all_for"] - votes["own_for"]
    others_against = votes["all_against"] - votes["own_against"]
    votes["scored"] = others_for != others_against
    votes["agreed"] = others_for > others_against
    per_rater = votes.groupby(["question", "rater"]).agg(
        decisive=("won", "size"), scored=("scored", "sum"), agreed=("agreed", "sum")
    )
    everything = fitted.groupby(["question", "rater"]).agg(
        rater_kind=("rater_kind", "first"), votes=("winner", "size")
    )
    table = everything.join(per_rater).reset_index()
    table = table.fillna({"decisive": 0, "scored": 0, "agreed": 0})
    for column in ("decisive", "scored", "agreed"):
        table[column] = table[column].astype(int)
    scored = table["scored"].where(table["scored"] > 0)
    table["agreement"] = table["agreed"] / scored
    return table[RATER_COLUMNS]


def onboarding(votes: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per annotator with onboarding pairs (known answers): how many, how many right, the
    rate, and whether it reaches ``threshold`` (ACUTE-Eval's is 0.75)."""
    known = votes[votes["onboarding"].astype(bool)]
    if known.empty:
        return pd.DataFrame(columns=ONBOARDING_COLUMNS)
    right = known["onboarding_correct"].astype("boolean").fillna(False).astype(bool)
    table = (
        pd.DataFrame({"rater": known["rater"].astype(str), "right": right})
        .groupby("rater", sort=True)
        .agg(pairs=("right", "size"), correct=("right", "sum"))
        .reset_index()
    )
    table["correct"] = table["correct"].astype(int)
    table["rate"] = table["correct"] / table["pairs"]
    table["passed"] = table["rate"] >= threshold
    return table[ONBOARDING_COLUMNS]


def comparisons_needed(p: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Decisive votes of one pair for the two-sided exact binomial (sign) test at ``alpha``
    to find with ``power`` that the better system is preferred, when it wins a decisive vote
    at rate ``p``: the smallest n whose rejection region (k ≤ c or k ≥ n − c, the largest c
    with 2·P(K ≤ c | ½) ≤ α) has at least that power (exact power is not monotone in n;
    tests/r/pairwise_sample_size.R computes the same)."""
    if not 0 <= p <= 1 or abs(p - 0.5) < 1e-12:
        return math.nan
    p = max(p, 1 - p)
    # the first n in chunks, the first one small: most gaps need a few hundred votes, and the
    # binomial's quantile costs per n tried (the same n is found whatever the chunks)
    for start, size in [(1, 256), *((s, 2_000) for s in range(257, 200_001, 2_000))]:
        n = np.arange(start, start + size)
        c = stats.binom.ppf(alpha / 2, n, 0.5)
        c = np.where(2 * stats.binom.cdf(c, n, 0.5) > alpha, c - 1, c)
        reached = stats.binom.cdf(c, n, p) + stats.binom.sf(n - c - 1, n, p)
        reached = np.where(c >= 0, reached, 0.0)
        hit = np.flatnonzero(reached >= power)
        if len(hit):
            return float(n[hit[0]])
    return math.nan


def sample_size(
    question: str,
    ranked: pd.DataFrame,
    pairs: pd.DataFrame,
    decisive: Callable[[float], tuple[float, float]],
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """For each system and the next one down the ranking: ``decisive(Δ)`` gives, for a gap
    Δ in log-strength, the rate at which the better one wins a decisive vote and the share
    of votes that are ties; the decisive votes the exact test needs, and the comparisons
    that make them (decisive ones over the share that is decisive), and how many there
    were."""
    rows = []
    ordered = ranked.sort_values("log_strength", ascending=False)
    names, strengths = ordered["system"].tolist(), ordered["log_strength"].to_numpy()
    mine = pairs[pairs["question"] == question]
    for k in range(len(names) - 1):
        p, tie_share = decisive(float(strengths[k] - strengths[k + 1]))
        needed = comparisons_needed(p, alpha=alpha, power=power)
        one, two = sorted((names[k], names[k + 1]))
        met = mine[(mine["system_1"] == one) & (mine["system_2"] == two)]["comparisons"]
        rows.append(
            {
                "question": question,
                "system": names[k],
                "opponent": names[k + 1],
                "win_probability": float(p),
                "tie_share": tie_share,
                "decisive_needed": needed,
                "needed_per_pair": float(math.ceil(needed / (1 - tie_share)))
                if math.isfinite(needed) and tie_share < 1
                else math.nan,
                "comparisons": int(met.sum()),
            }
        )
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
