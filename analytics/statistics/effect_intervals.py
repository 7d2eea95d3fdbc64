"""95% intervals of the effect sizes the comparison tests report, each by the method that
suits its effect, and named, because a reader weighs an effect by its interval, not its p.

- rank-biserial r (Mann–Whitney) and the matched-pairs rank-biserial r (Wilcoxon): the
  Fisher z interval, tanh(atanh(r) ± 1.96 SE), the SE from the normal approximation of the
  rank sum, √((n1 + n2 + 1) / (3 n1 n2)) and √((2m³ + 3m² + m) / 6) / (m (m + 1) / 2) with m
  the non-zero differences (as R's ``effectsize::rank_biserial``);
- the conditional maximum-likelihood odds ratio of Fisher's test: its exact conditional
  interval (as R's ``fisher.test``);
- McNemar's matched-pairs odds ratio b / c: the exact Clopper–Pearson interval of b / (b + c)
  turned into odds;
- ε² (Kruskal–Wallis), Kendall's W (Friedman), η²_Q (Cochran) and Cramér's V: no closed form,
  so a percentile bootstrap over participants (within each system where the systems had
  different participants, as R's ``boot(strata = )``), with a fixed seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.stats import binomtest, rankdata
from scipy.stats.contingency import odds_ratio

RESAMPLES = 2_000
SEED = 0
"""Bootstrap resamples, seeded so that a report is reproducible; the ends of a percentile
interval move by about 0.01 between seeds at this many."""
LEVEL = 0.95
_Z = 1.959963984540054

FISHER_Z = "Fisher z interval, SE from the normal approximation of the rank sum"
CONDITIONAL = "exact conditional interval (as R's fisher.test)"
CLOPPER_PEARSON = "exact Clopper–Pearson interval of the discordant pairs, as odds"
BOOTSTRAP = f"percentile bootstrap over participants ({RESAMPLES:,} resamples, seed {SEED})"
BOOTSTRAP_STRATA = (
    f"percentile bootstrap over participants within each system ({RESAMPLES:,} resamples, "
    f"seed {SEED})"
)

WALD_ROBUST = "Wald interval on the log odds, robust (sandwich) standard errors"

INTERVAL_METHODS = (
    FISHER_Z, CONDITIONAL, CLOPPER_PEARSON, BOOTSTRAP, BOOTSTRAP_STRATA, WALD_ROBUST,
)  # fmt: skip


class Interval(NamedTuple):
    """The 95% interval of an effect size and how it was computed."""

    low: float
    high: float
    method: str

    def fields(self) -> dict[str, float | str]:
        """The interval as the comparison table's columns."""
        return {"effect_ci_low": self.low, "effect_ci_high": self.high,
                "effect_ci_method": self.method}  # fmt: skip


def _fisher_z(r: float, se: float) -> Interval:
    """A complete separation (r = ±1) has an infinite z and the interval [r, r], as R's
    ``tanh(atanh(1) ± …)`` gives."""
    centre = math.copysign(math.inf, r) if abs(r) >= 1 else math.atanh(r)
    return Interval(math.tanh(centre - _Z * se), math.tanh(centre + _Z * se), FISHER_Z)


def rank_biserial(r: float, n1: int, n2: int) -> Interval:
    """The interval of Mann–Whitney's rank-biserial r of samples of ``n1`` and ``n2``."""
    return _fisher_z(r, math.sqrt((n1 + n2 + 1) / (3 * n1 * n2)))


def matched_rank_biserial(r: float, nonzero: int) -> Interval:
    """The interval of Wilcoxon's matched-pairs rank-biserial r over ``nonzero`` pairs
    that differ."""
    if nonzero < 1:
        return Interval(math.nan, math.nan, FISHER_Z)
    m = nonzero
    return _fisher_z(r, math.sqrt((2 * m**3 + 3 * m**2 + m) / 6) / (m * (m + 1) / 2))


def conditional_odds_ratio(table: np.ndarray) -> Interval:
    """The exact interval of the conditional MLE odds ratio of a 2 × 2 table."""
    found = odds_ratio(np.asarray(table, dtype=np.int64), kind="conditional")
    ci = found.confidence_interval(confidence_level=LEVEL)
    return Interval(float(ci.low), float(ci.high), CONDITIONAL)


def matched_odds_ratio(only_a: int, only_b: int) -> Interval:
    """The interval of b / c from the exact binomial interval of b / (b + c)."""
    if only_a + only_b == 0:
        return Interval(math.nan, math.nan, CLOPPER_PEARSON)
    ci = binomtest(only_a, only_a + only_b).proportion_ci(LEVEL, method="exact")

    def odds(p: float) -> float:
        return math.inf if p >= 1 else p / (1 - p)

    return Interval(odds(float(ci.low)), odds(float(ci.high)), CLOPPER_PEARSON)


def _percentiles(values: np.ndarray, method: str) -> Interval:
    kept = values[np.isfinite(values)]
    if len(kept) == 0:
        return Interval(math.nan, math.nan, method)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(kept, [tail, 1 - tail])  # R's type 7, as boot's quantile
    return Interval(float(low), float(high), method)


def kruskal_h(counts: np.ndarray) -> np.ndarray:
    """Kruskal–Wallis H with the tie correction (as scipy's ``kruskal``) from counts:
    ``counts[..., system, value]`` how many of a system's participants gave each distinct
    value, the values in increasing order. Ranks of tied values are midranks, so H
    depends on the data only through these counts."""
    sizes = counts.sum(axis=-1)
    ties = counts.sum(axis=-2)
    midranks = np.cumsum(ties, axis=-1) - (ties - 1) / 2
    rank_sums = (counts * midranks[..., None, :]).sum(axis=-1)
    return _h(rank_sums, sizes, sizes.sum(axis=-1), (ties**3 - ties).sum(axis=-1))


def _h(
    rank_sums: np.ndarray, sizes: np.ndarray, total: np.ndarray, tie_term: np.ndarray
) -> np.ndarray:
    """H from each system's rank sum and size, the number of values and the ties' Σ(t³ − t)
    over each distinct value's count t: all whole or half numbers, so however they were
    summed, they are exact and H is the same to the last bit."""
    with np.errstate(divide="ignore", invalid="ignore"):
        h = 12 / (total * (total + 1)) * (rank_sums**2 / sizes).sum(axis=-1) - 3 * (total + 1)
        return h / (1 - tie_term / (total**3 - total))


def epsilon_squared(samples: Sequence[np.ndarray]) -> Interval:
    """The bootstrap interval of ε² = H / (n − 1) of Kruskal–Wallis over these systems'
    participants (one value each). Each system's participants are resampled among
    themselves: the counts of its distinct values drawn from their multinomial (the same
    distribution as drawing participants, without ranking each resample's n values).
    Each resample's rank sums are dot products of counts and midranks: no resample ×
    system × value array of floats, which took hundreds of MB with many distinct values.
    The draws take most of the time; what follows them is written for speed, every number
    still exact: twice the midranks are whole numbers (32-bit integers, half the memory of
    floats), the resample × value arrays are kept column by column (Fortran order: a
    system's columns are copied and gathered whole), and the last system's rank sum is
    what the others leave of n (n + 1) / 2."""
    rng = np.random.default_rng(SEED)
    values = [np.asarray(s, dtype=float) for s in samples]
    distinct, codes = np.unique(np.concatenate(values), return_inverse=True)
    sizes = [len(v) for v in values]
    drawn = [  # per system: its values' columns, and their counts per resample
        _multinomial(rng, size, np.bincount(part, minlength=len(distinct)) / size)
        for size, part in zip(sizes, np.split(codes, np.cumsum(sizes)[:-1]), strict=True)
    ]
    n = sum(sizes)  # every resample keeps every system's size
    ties = np.zeros((RESAMPLES, len(distinct)), dtype=np.int32, order="F")
    for columns, counts in drawn:
        ties[:, columns] += counts
    twice = np.cumsum(ties, axis=-1, dtype=np.int32)  # 2 × midrank = 2 × cumsum − ties + 1
    twice *= 2
    twice -= ties
    twice += 1
    firsts = np.stack(
        [
            np.einsum("rv,rv->r", counts, twice[:, columns], dtype=np.int64) / 2
            for columns, counts in drawn[:-1]
        ],
        axis=1,
    )
    del drawn, twice
    rank_sums = np.column_stack([firsts, n * (n + 1) / 2 - firsts.sum(axis=1)])
    cubes = np.einsum("rv,rv,rv->r", ties, ties, ties, dtype=np.int64)  # Σ(t³ − t) = Σt³ − n
    total = np.full(RESAMPLES, float(n))
    h = _h(rank_sums, np.array(sizes, dtype=float), total, cubes - n)
    return _percentiles(h / (n - 1), BOOTSTRAP_STRATA)


def _multinomial(
    rng: np.random.Generator, size: int, p: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``rng.multinomial(size, p, RESAMPLES)``, the same draws from the same stream, as
    (the columns it can fill, their counts as 32-bit integers): numpy draws category by
    category and a category of probability 0 takes no random number, so it is left out,
    but for the last category, which takes what the others left (the column it fills)."""
    columns = np.flatnonzero(p)
    if columns[-1] != len(p) - 1:
        columns = np.append(columns, len(p) - 1)
    return columns, rng.multinomial(size, p[columns], RESAMPLES).astype(np.int32)


def kendalls_w(wide: np.ndarray) -> Interval:
    """The bootstrap interval of Kendall's W = Q / (n (k − 1)) of Friedman's test, a row
    per participant, a column per system. A participant's ranks (and ties) do not change
    when participants are resampled: ranked once, summed per resample."""
    rng = np.random.default_rng(SEED)
    wide = np.asarray(wide, dtype=float)
    n, k = wide.shape
    ranks = rankdata(wide, axis=1)
    ties = np.array([_tie_term(row) for row in wide])
    drawn = rng.integers(0, n, size=(RESAMPLES, n))
    sums = np.stack([ranks[:, j][drawn].sum(axis=1) for j in range(k)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = 12 / (n * k * (k + 1)) * (sums**2).sum(axis=1) - 3 * n * (k + 1)
        q = q / (1 - ties[drawn].sum(axis=1) / (n * k * (k * k - 1)))
    return _percentiles(q / (n * (k - 1)), BOOTSTRAP)


def _tie_term(row: np.ndarray) -> float:
    counts = np.unique(row, return_counts=True)[1].astype(float)
    return float((counts**3 - counts).sum())


def cochran_eta(hits: np.ndarray) -> Interval:
    """The bootstrap interval of η²_Q = Q / (n (k − 1)) of Cochran's Q, a row of 1 and 0
    per participant, a column per system."""
    rng = np.random.default_rng(SEED)
    hits = np.asarray(hits, dtype=float)
    n, k = hits.shape
    drawn = hits[rng.integers(0, n, size=(RESAMPLES, n))]
    columns, rows = drawn.sum(axis=1), drawn.sum(axis=2)
    total = rows.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (
            (k - 1)
            * (k * (columns**2).sum(axis=1) - total**2)
            / (k * total - (rows**2).sum(axis=1))
        )
    return _percentiles(q / (n * (k - 1)), BOOTSTRAP)


def cramers_v(counts: np.ndarray) -> Interval:
    """The bootstrap interval of Cramér's V of a table of counts, a row per system: each
    system's participants resampled among themselves (its answers drawn from its own)."""
    rng = np.random.default_rng(SEED)
    counts = np.asarray(counts, dtype=np.int64)
    sizes = counts.sum(axis=1)
    drawn = np.stack(
        [
            rng.multinomial(size, row / size, size=RESAMPLES)
            for size, row in zip(sizes, counts, strict=True)
        ],
        axis=1,
    ).astype(float)  # resample × system × answer
    total = float(sizes.sum())
    expected = sizes[None, :, None] * drawn.sum(axis=1, keepdims=True) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        cells = np.where(expected > 0, (drawn - expected) ** 2 / expected, 0.0)
    chi2 = cells.sum(axis=(1, 2))
    answers = (drawn.sum(axis=1) > 0).sum(axis=1)
    smaller = np.minimum(len(sizes), answers) - 1
    v = np.where(smaller > 0, np.sqrt(chi2 / (total * np.maximum(smaller, 1))), 0.0)
    return _percentiles(v, BOOTSTRAP_STRATA)
