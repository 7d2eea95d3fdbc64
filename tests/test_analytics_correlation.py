"""Spearman's ρ as R's ``cor.test`` tests it (AS 89: every permutation up to 9 pairs, the
Edgeworth series beyond, t with ties) and the Bonett–Wright interval. R is not installed
here: the R values are from R's own documented example, with the R code beside them, and the
rest are checked against every permutation counted in the test or against scipy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from analytics.statistics.correlation import (
    BONETT_WRIGHT,
    EDGEWORTH,
    EXACT_PERMUTATIONS,
    T_APPROXIMATION,
    bonett_wright,
    spearman,
)

# R's ?cor.test example (Hollander & Wolfe 1973, p. 187): aortic valve area and pressure.
HOLLANDER_X = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1]
HOLLANDER_Y = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8]


def test_the_exact_p_of_rs_documented_example() -> None:
    """R:  x <- c(44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1)
           y <- c( 2.6,  3.1,  2.5,  5.0,  3.6,  4.0,  5.2,  2.8,  3.8)
           cor.test(x, y, method = "spearman", alternative = "greater")
    prints S = 48, p-value = 0.0484, rho 0.6; the two-sided test (the default) doubles
    the tail: 2 · P(S ≤ 48), which every one of the 9! orderings counted here gives."""
    found = spearman(np.array(HOLLANDER_X), np.array(HOLLANDER_Y))
    assert found.rho == pytest.approx(0.6)
    assert found.p_method == EXACT_PERMUTATIONS
    s = ((_orders(9) - np.arange(9)) ** 2).sum(axis=1)
    one_sided = np.count_nonzero(s <= 48) / len(s)
    assert one_sided == pytest.approx(0.0484, abs=5e-5)
    assert found.p == pytest.approx(2 * one_sided, rel=1e-12)


def _orders(n: int) -> np.ndarray:
    """Every ordering of 0 … n − 1, a row each, as itertools lists them."""
    flat = itertools.chain.from_iterable(itertools.permutations(range(n)))
    return np.fromiter(flat, dtype=np.int64, count=n * math.factorial(n)).reshape(-1, n)


def _exact_ten() -> np.ndarray:
    """S of every ordering of 10 ranks: the first rank, then the 9! orders of the rest."""
    rest = _orders(9)
    values = []
    for first in range(10):
        others = np.array([v for v in range(10) if v != first])
        values.append((first - 0) ** 2 + ((others[rest] - np.arange(1, 10)) ** 2).sum(axis=1))
    return np.concatenate(values)


def test_from_ten_pairs_the_edgeworth_series_is_close_to_every_permutation() -> None:
    """AS 89's series (Best & Roberts 1975) for n = 10 against the exact tail probabilities,
    both sides, across the range where tests are decided (exact p from 0.001 to 0.3)."""
    s = np.sort(_exact_ten())  # sorted: each tail counted by a binary search
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(200):
        y = rng.permutation(10) + 1.0
        found = spearman(np.arange(1.0, 11.0), y)
        observed = int(((np.arange(1, 11) - y) ** 2).sum())
        mean = (10**3 - 10) / 6
        above, below = len(s) - s.searchsorted(observed), s.searchsorted(observed, "right")
        tail = (above if observed > mean else below) / len(s)
        exact = min(1.0, 2 * tail)
        assert found.p_method == EDGEWORTH
        if 0.001 <= exact <= 0.3:
            assert found.p == pytest.approx(exact, abs=0.003), (observed, exact)
            checked += 1
    assert checked > 20


def test_ties_take_the_t_approximation_as_r_and_scipy() -> None:
    """With ties R's cor.test warns "cannot compute exact p-value with ties" and uses t with
    n − 2 df, which is scipy's spearmanr."""
    x = np.array([1, 2, 2, 3, 4, 5, 5, 6, 7, 8], dtype=float)
    y = np.array([2, 1, 3, 3, 5, 4, 6, 8, 7, 9], dtype=float)
    found = spearman(x, y)
    expected = stats.spearmanr(x, y)
    assert found.p_method == T_APPROXIMATION
    assert (found.rho, found.p) == (
        pytest.approx(expected.statistic, rel=1e-12),
        pytest.approx(expected.pvalue, rel=1e-9),
    )


def test_bonett_wright_interval_by_hand() -> None:
    """ρ = 0.6, n = 9: z = atanh 0.6 = 0.693147, se = √((1 + 0.18) / 6) = 0.443471,
    tanh(0.693147 ± 1.959964 · 0.443471) = (−0.1742, 0.9158); wider than Fisher's
    1/√(n − 3) for Pearson's r."""
    low, high = bonett_wright(0.6, 9)
    se = math.sqrt((1 + 0.6**2 / 2) / 6)
    assert se == pytest.approx(0.443471, abs=1e-6)
    z = stats.norm.ppf(0.975)
    assert (low, high) == (
        pytest.approx(math.tanh(math.atanh(0.6) - z * se), rel=1e-12),
        pytest.approx(math.tanh(math.atanh(0.6) + z * se), rel=1e-12),
    )
    assert (round(low, 4), round(high, 4)) == (-0.1742, 0.9158)
    fisher = math.tanh(math.atanh(0.6) - z / math.sqrt(6))
    assert low < fisher
    found = spearman(np.array(HOLLANDER_X), np.array(HOLLANDER_Y))
    assert (found.ci_low, found.ci_high, found.ci_method) == (low, high, BONETT_WRIGHT)
    with pytest.raises(ValueError, match="at least 4 pairs"):
        spearman(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0]))
