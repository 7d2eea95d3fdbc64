"""Spearman's rank correlation with the p-value R's ``cor.test`` gives and an interval meant
for it.

- p, two-sided, as R's ``cor.test(method = "spearman")``: without ties and for n ≤ 1290,
  from the distribution of S = Σ (rank x − rank y)² by algorithm AS 89 (Best & Roberts
  1975): every permutation counted for n ≤ 9, the Edgeworth series beyond; with ties, or
  for more pairs, Student's t on ρ √((n − 2) / (1 − ρ²)) with n − 2 degrees of freedom;
- the 95% interval of Bonett & Wright (2000): Fisher's z of ρ with the variance
  (1 + ρ² / 2) / (n − 3), wider than Pearson's 1 / (n − 3) because ranks are not normal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.stats import norm, rankdata
from scipy.stats import t as student_t

__all__ = [
    "BONETT_WRIGHT",
    "EDGEWORTH",
    "EXACT_PERMUTATIONS",
    "T_APPROXIMATION",
    "RankCorrelation",
    "spearman",
]

EXACT_PERMUTATIONS = "exact (every permutation, AS 89 as R's cor.test)"
EDGEWORTH = "Edgeworth series of AS 89, as R's cor.test (no ties)"
T_APPROXIMATION = "t approximation with n − 2 df (ties, as R's cor.test)"
BONETT_WRIGHT = "Bonett–Wright: Fisher z with variance (1 + ρ²/2)/(n − 3)"
EXACT_LIMIT = 9
"""AS 89 counts every permutation up to 9 pairs (R's ``n_small``), beyond that the series."""
SERIES_LIMIT = 1290
"""R's ``cor.test`` leaves AS 89 for the t approximation above 1290 pairs."""
_EDGEWORTH = (0.2274, 0.2531, 0.1745, 0.0758, 0.1033, 0.3932, 0.0879, 0.0151, 0.0072,
              0.0831, 0.0131, 4.6e-4)  # fmt: skip
"""The coefficients c1..c12 of AS 89's Edgeworth series (Best & Roberts 1975)."""


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p: float
    p_method: str
    ci_low: float
    ci_high: float
    ci_method: str = BONETT_WRIGHT


def spearman(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> RankCorrelation:
    """Spearman's ρ of paired ``x`` and ``y`` (at least 4 pairs, neither constant), its
    two-sided p and its Bonett–Wright interval."""
    a, b = rankdata(np.asarray(x, dtype=float)), rankdata(np.asarray(y, dtype=float))
    n = len(a)
    if n < 4:
        raise ValueError(f"Spearman's interval needs at least 4 pairs, not {n}")
    rho = float(np.corrcoef(a, b)[0, 1])
    ties = len(np.unique(a)) < n or len(np.unique(b)) < n
    if ties or n > SERIES_LIMIT:
        p, method = _t_p(rho, n), T_APPROXIMATION
    else:
        s = round(float(((a - b) ** 2).sum()))
        p = _as89_two_sided(s, n)
        method = EXACT_PERMUTATIONS if n <= EXACT_LIMIT else EDGEWORTH
    low, high = bonett_wright(rho, n, confidence)
    return RankCorrelation(rho, p, method, low, high)


def bonett_wright(rho: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """tanh(atanh ρ ± z · √((1 + ρ²/2) / (n − 3))) (Bonett & Wright 2000, Psychometrika
    65: 23–28); ρ = ±1 gives the point itself."""
    if abs(rho) >= 1:
        return (rho, rho)
    half = norm.ppf(0.5 + confidence / 2) * math.sqrt((1 + rho**2 / 2) / (n - 3))
    z = math.atanh(rho)
    return (math.tanh(z - half), math.tanh(z + half))


def _t_p(rho: float, n: int) -> float:
    if abs(rho) >= 1:
        return 0.0
    t = rho * math.sqrt((n - 2) / (1 - rho**2))
    return float(min(1.0, 2 * student_t.sf(abs(t), n - 2)))


def _as89_two_sided(s: int, n: int) -> float:
    """Twice the tail of S on the observed side (S above its mean (n³ − n)/6 is a negative
    ρ): P(S ≥ s) there, P(S ≤ s) otherwise, at most 1."""
    # S is even without ties, so P(S ≤ s) = 1 − P(S ≥ s + 2)
    tail = _at_least(s, n) if 6 * s > n**3 - n else 1 - _at_least(s + 2, n)
    return min(1.0, 2 * tail)


def _at_least(s: int, n: int) -> float:
    """P(S ≥ s) under independence, by AS 89."""
    if s <= 0:
        return 1.0
    if 3 * s > n**3 - n:  # above the largest value S takes
        return 0.0
    if n <= EXACT_LIMIT:
        return float(_null_counts(n)[s:].sum() / math.factorial(n))
    c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12 = _EDGEWORTH
    b = 1 / n
    x = (6 * (s - 1) * b / (n * n - 1) - 1) * math.sqrt(n - 1)  # ≈ −ρ √(n − 1), standard normal
    y = x * x
    u = x * b * (c1 + b * (c2 + c3 * b) + y * (-c4 + b * (c5 + c6 * b) - y * b * (
        c7 + c8 * b - y * (c9 - c10 * b + y * b * (c11 - c12 * y)))))  # fmt: skip
    upper = u / math.exp(y / 2) + float(norm.sf(x))
    return min(1.0, max(0.0, upper))


@lru_cache(maxsize=EXACT_LIMIT)
def _null_counts(n: int) -> npt.NDArray[np.int64]:
    """How many of the n! orderings of the second ranks against the first give each S (the
    index): the ranks placed one position at a time, the orderings that placed the same
    ranks so far counted together (2ⁿ sets of ranks, not n! orderings to list)."""
    top = (n**3 - n) // 3  # the largest S
    start = np.zeros(top + 1, dtype=np.int64)
    start[0] = 1
    ways = {0: start}  # a bit per rank placed: the orderings so far, by S
    for position in range(n):
        placed: dict[int, npt.NDArray[np.int64]] = {}
        for used, counts in ways.items():
            for rank in range(n):
                if not used >> rank & 1:
                    grown = placed.setdefault(used | 1 << rank, np.zeros(top + 1, np.int64))
                    step = (rank - position) ** 2
                    grown[step:] += counts[: top + 1 - step]
        ways = placed
    return ways[(1 << n) - 1]
