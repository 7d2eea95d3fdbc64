"""What the votes say before any model: win rates, comparisons per pair, raters'
agreement with the majority, annotators' onboarding, and how many comparisons would
separate two systems.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
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


def win_rates(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question, system and opponent: wins, losses, ties and the win rate with ties
    as half a win (the matrix of the heat map). Counted over plain tuples, as
    ``rater_agreement`` is: a frame's group-by cost ten times the counting."""
    if fitted.empty:
        return pd.DataFrame(columns=WIN_RATE_COLUMNS)
    tally: dict[tuple[str, str, str], list[int]] = {}
    for question, a, b, winner in _votes(fitted):
        for system, opponent, won, lost in ((a, b, "a", "b"), (b, a, "b", "a")):
            counts = tally.setdefault((question, system, opponent), [0, 0, 0])
            counts[0] += winner == won
            counts[1] += winner == lost
            counts[2] += winner == "tie"
    table = _counted(tally, ["question", "system", "opponent", "wins", "losses", "ties"])
    table["comparisons"] = table["wins"] + table["losses"] + table["ties"]
    table["win_rate"] = (table["wins"] + table["ties"] / 2) / table["comparisons"]
    return table[WIN_RATE_COLUMNS]


def pair_counts(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question and unordered pair (names in sorted order): comparisons, how often each
    was shown first, wins and ties."""
    if fitted.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    tally: dict[tuple[str, str, str], list[int]] = {}
    for question, a, b, winner in _votes(fitted):
        swapped = a > b
        counts = tally.setdefault((question, *((b, a) if swapped else (a, b))), [0, 0, 0, 0, 0])
        counts[0] += 1
        counts[1] += not swapped
        counts[2] += winner == ("b" if swapped else "a")
        counts[3] += winner == ("a" if swapped else "b")
        counts[4] += winner == "tie"
    columns = ["question", "system_1", "system_2", "comparisons", "system_1_first"]
    table = _counted(tally, [*columns, "system_1_wins", "system_2_wins", "ties"])
    table["system_2_first"] = table["comparisons"] - table["system_1_first"]
    table["tie_rate"] = table["ties"] / table["comparisons"]
    return table[PAIR_COLUMNS]


def _votes(fitted: pd.DataFrame) -> zip[tuple[str, str, str, str]]:
    """Each vote's question, systems shown first and second, and winner, as plain strings."""
    return zip(
        *(fitted[c].astype(str) for c in ("question", "system_a", "system_b", "winner")),
        strict=True,
    )


def _counted(tally: dict[tuple[str, str, str], list[int]], columns: list[str]) -> pd.DataFrame:
    """The tally as a frame, one row per key in sorted order, the counts as int64."""
    keys = sorted(tally)
    table = pd.DataFrame(keys, columns=columns[:3])
    counts = np.array([tally[key] for key in keys], dtype=np.int64).reshape(len(keys), -1)
    for position, name in enumerate(columns[3:]):
        table[name] = counts[:, position]
    return table


def rater_agreement(fitted: pd.DataFrame) -> pd.DataFrame:
    """Per question and rater: how often the rater's decisive votes agree with the majority
    of the other raters (``AGREEMENT_METHOD``). Counted over plain tuples: a report's votes
    are few, and a frame's joins would cost more than the counting."""
    if fitted.empty:
        return pd.DataFrame(columns=RATER_COLUMNS)
    rows = list(
        zip(
            fitted["question"].astype(str),
            fitted["rater"].astype(str),
            fitted["rater_kind"],
            fitted["system_a"].astype(str),
            fitted["system_b"].astype(str),
            fitted["winner"],
            strict=True,
        )
    )
    decisive = [
        (question, rater, a if winner == "a" else b, b if winner == "a" else a)
        for question, rater, _, a, b, winner in rows
        if winner in ("a", "b")
    ]
    everyone = Counter((question, won, lost) for question, _, won, lost in decisive)
    own = Counter(decisive)
    kind: dict[tuple[str, str], object] = {}
    counts: dict[tuple[str, str], list[int]] = {}
    for question, rater, rater_kind, *_ in rows:
        kind.setdefault((question, rater), rater_kind)
        counts.setdefault((question, rater), [0, 0, 0, 0])[0] += 1
    for vote in decisive:
        question, rater, won, lost = vote
        others_for = everyone[question, won, lost] - own[vote]
        others_against = everyone[question, lost, won] - own[question, rater, lost, won]
        mine = counts[question, rater]
        mine[1] += 1
        mine[2] += others_for != others_against
        mine[3] += others_for > others_against
    table = pd.DataFrame(
        [(*key, kind[key], *counts[key]) for key in sorted(counts)], columns=RATER_COLUMNS[:-1]
    )
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
    # n is looked for in chunks, the first one small (most gaps need a few hundred votes),
    # a few chunks at a time in pieces, a few pieces at a time in smaller ones, down to
    # single n: a chunk or piece whose bound falls short of the power is passed over (the
    # same n is found), so a gap that needs thousands of votes costs the exact power of
    # the n near its answer, not of every n below it
    c_first, c_last = _chunk_ends(alpha)
    firsts, lasts = _CHUNK_FIRSTS, _CHUNK_FIRSTS + _CHUNK_SIZES - 1
    kept = _power_bound(p, firsts, lasts, c_first, c_last) >= power
    found = _first_reaching(p, alpha, power, firsts[kept], lasts[kept], _PIECES)
    return math.nan if found is None else float(found)


_CHUNK_FIRSTS = np.array([1, *range(257, 200_001, 2_000)])
_CHUNK_SIZES = np.array([256] + [2_000] * (len(_CHUNK_FIRSTS) - 1))
_PIECES = (128, 8, 1)
_AT_ONCE = 8
"""Chunks or pieces whose bound reaches the power are cut smaller this many at a time:
the n past the answer reach it too, and are better not computed."""


def _first_reaching(
    p: float,
    alpha: float,
    power: float,
    first: npt.NDArray[np.int64],
    last: npt.NDArray[np.int64],
    widths: tuple[int, ...],
) -> int | None:
    """The smallest n of the ranges ``first``–``last`` whose power reaches ``power``: the
    ranges in pieces of ``widths[0]``, those whose bound reaches the power in pieces of
    the next width, down to single n, whose bound is their exact power."""
    for group in range(0, len(first), _AT_ONCE):
        a, b = first[group : group + _AT_ONCE], last[group : group + _AT_ONCE]
        pieces = [np.arange(one, two + 1, widths[0]) for one, two in zip(a, b, strict=True)]
        starts = np.concatenate(pieces)
        ends = np.minimum(starts + widths[0] - 1, b[np.searchsorted(b, starts)])
        both = np.union1d(starts, ends)  # the same n when the pieces are single n
        c = _critical_counts(alpha, both)
        c_start, c_end = c[both.searchsorted(starts)], c[both.searchsorted(ends)]
        kept = _power_bound(p, starts, ends, c_start, c_end) >= power
        if len(widths) > 1:
            found = _first_reaching(p, alpha, power, starts[kept], ends[kept], widths[1:])
        else:
            found = int(starts[kept][0]) if kept.any() else None
        if found is not None:
            return found
    return None


def _power_bound(
    p: float,
    first: npt.NDArray[np.int64],
    last: npt.NDArray[np.int64],
    c_first: npt.NDArray[np.float64],
    c_last: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """A bound on the sign test's power at every n from ``first`` to ``last``: n − c(n)
    never falls as n grows, c(n) never falls, and more votes give a count at least as
    large, so P(K_n ≥ n − c(n)) ≤ P(K_last ≥ first − c(first)) and P(K_n ≤ c(n)) ≤
    P(K_first ≤ c(last))."""
    return stats.binom.sf(first - c_first - 1, last, p) + np.where(
        c_last >= 0, stats.binom.cdf(c_last, first, p), 0.0
    )


def _critical_counts(alpha: float, n: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The sign test's rejection bound: the largest c with 2·P(K ≤ c | n, ½) ≤ α (−1 when
    there is none)."""
    c = stats.binom.ppf(alpha / 2, n, 0.5)
    c = np.where(2 * stats.binom.cdf(c, n, 0.5) > alpha, c - 1, c)
    c.setflags(write=False)
    return c


@functools.lru_cache(maxsize=8)
def _chunk_ends(alpha: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    return (
        _critical_counts(alpha, _CHUNK_FIRSTS),
        _critical_counts(alpha, _CHUNK_FIRSTS + _CHUNK_SIZES - 1),
    )


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
