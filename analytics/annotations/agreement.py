"""Agreement between annotators who rated the same targets: the coefficients themselves.

Every function takes one item's ratings as an annotators × targets array (Krippendorff's
"reliability data": a row per annotator, a column per target, NaN where an annotator did
not rate a target) and returns numbers; ``analytics.annotations.ratings`` decides which targets and
annotators go in, and the report only formats what comes out.

- ICC, six forms (Shrout & Fleiss 1979; McGraw & Wong 1996), by pingouin: ICC(1,·) when
  each target may have had other annotators, ICC(2,·) when the annotators are a random
  sample of annotators who could have been asked and their levels count (absolute
  agreement), ICC(3,·) when only these annotators matter and only their consistency counts;
  ``·,1`` is the reliability of one annotator's rating, ``·,k`` of the mean of k. They need
  every annotator on every target, so only such targets count.
- Krippendorff's alpha (Krippendorff 2011), by the ``krippendorff`` package, at every level
  of measurement the item allows; it takes missing ratings as they come.
- Cohen's kappa for two annotators (linearly and quadratically weighted for scales), Fleiss'
  kappa for more (not necessarily the same annotators on every target: Fleiss 1971; in the
  form for unequal numbers of ratings per target, Gwet 2014), and percentage agreement
  (agreeing pairs of ratings of a target over all such pairs).

Intervals of alpha, kappa and agreement come from a bootstrap over targets (``RESAMPLES``
resamples with replacement, drawn from ``SEED``: the same numbers on every run), percentile
interval. Every statistic here is a function of sums over targets, so a resample is one
matrix product of resampling counts with each target's contribution, not a new computation.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = [
    "CONFIDENCE",
    "ICC_FORMS",
    "LEVELS",
    "RESAMPLES",
    "SEED",
    "alpha",
    "alpha_interval",
    "alpha_intervals",
    "cohen_kappa",
    "fleiss_kappa",
    "icc_forms",
    "percent_agreement",
    "unrounded",
]

SEED = 2011
"""The bootstrap's seed (the year of Krippendorff's paper): fixed, so reports are identical."""
RESAMPLES = 1000
CONFIDENCE = 0.95
LEVELS = ("nominal", "ordinal", "interval", "ratio")
ICC_FORMS = {
    "ICC(1,1)": "ICC1",
    "ICC(A,1)": "ICC2",
    "ICC(C,1)": "ICC3",
    "ICC(1,k)": "ICC1k",
    "ICC(A,k)": "ICC2k",
    "ICC(C,k)": "ICC3k",
}
"""pingouin's names (McGraw & Wong's A and C) → Shrout & Fleiss's, as the report names them."""

Matrix = np.ndarray
"""annotators × targets, float, NaN where a target was not rated by an annotator."""


@contextmanager
def unrounded() -> Iterator[None]:
    """pingouin rounds intervals to 2 dp by default: keep every digit, then restore."""
    import pingouin as pg  # imported where used: a report without annotations never pays for it

    rounding = pg.options.get("round.column.CI95")
    pg.options["round.column.CI95"] = None
    try:
        with warnings.catch_warnings():
            # pingouin 0.7.0 calls dropna(inplace=True), deprecated in pandas 3.1: that only.
            deprecation = getattr(pd.errors, "Pandas4Warning", DeprecationWarning)
            warnings.filterwarnings("ignore", "The inplace keyword", deprecation)
            yield
    finally:
        pg.options["round.column.CI95"] = rounding


def complete(data: Matrix) -> Matrix:
    """Only the targets every annotator rated."""
    return data[:, ~np.isnan(data).any(axis=0)]


def icc_forms(data: Matrix) -> dict[str, dict[str, float]]:
    """The six ICC forms on the targets every annotator rated: ``{"ICC2": {"value",
    "ci_low", "ci_high", "f", "df1", "df2", "p"}, ...}``; empty when fewer than two such
    targets or annotators, or when the ratings do not vary."""
    full = complete(data)
    raters, targets = full.shape
    if raters < 2 or targets < 2 or full.size < 5 or np.all(full == full.flat[0]):
        return {}
    long = pd.DataFrame(
        {
            "target": np.tile(np.arange(targets), raters),
            "rater": np.repeat(np.arange(raters), targets),
            "rating": full.reshape(-1),
        }
    )
    with unrounded(), np.errstate(divide="ignore", invalid="ignore"):
        import pingouin as pg  # here, as in unrounded()

        table = pg.intraclass_corr(long, targets="target", raters="rater", ratings="rating")
    forms: dict[str, dict[str, float]] = {}
    for row in table.to_dict("records"):
        low, high = row["CI95"]
        forms[ICC_FORMS[str(row["Type"])]] = {
            "value": float(row["ICC"]),
            "ci_low": float(low),
            "ci_high": float(high),
            "f": float(row["F"]),
            "df1": float(row["df1"]),
            "df2": float(row["df2"]),
            "p": float(row["pval"]),
        }
    return forms


def _pairable(data: Matrix) -> Matrix:
    """Targets with at least two ratings: the only ones alpha and agreement can use."""
    return data[:, (~np.isnan(data)).sum(axis=0) >= 2]


def alpha(data: Matrix, level: str, domain: Sequence[float]) -> float:
    """Krippendorff's alpha at ``level`` over the values ``domain`` (every value the item
    can take, in order: the ordinal metric ranks by it). NaN when fewer than two targets
    have two ratings or only one value was ever given."""
    import krippendorff

    pairable = _pairable(data)
    values = pairable[~np.isnan(pairable)]
    if pairable.shape[1] < 2 or len(np.unique(values)) < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(
            krippendorff.alpha(
                reliability_data=pairable,
                level_of_measurement=level,  # type: ignore[arg-type]  # one of LEVELS
                value_domain=list(domain),
            )
        )


def _counts(data: Matrix, domain: Sequence[float]) -> np.ndarray:
    """targets × values: how many annotators gave each value to each target."""
    points = np.asarray(domain, dtype=float)
    return np.stack([(data == v).sum(axis=0) for v in points], axis=1).astype(float)


def _distance(level: str, domain: Sequence[float], n: np.ndarray) -> np.ndarray:
    """Krippendorff's squared differences δ²(c, k) for each resample (``n``: resamples ×
    values, how often each value occurs; the ordinal metric depends on it)."""
    v = np.asarray(domain, dtype=float)
    if level == "nominal":
        delta = (v[:, None] != v[None, :]).astype(float)
        return np.broadcast_to(delta, (len(n), len(v), len(v)))
    if level == "interval":
        return np.broadcast_to((v[:, None] - v[None, :]) ** 2, (len(n), len(v), len(v)))
    if level == "ratio":
        total = v[:, None] + v[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = np.where(total == 0, 0.0, ((v[:, None] - v[None, :]) / total) ** 2)
        return np.broadcast_to(delta, (len(n), len(v), len(v)))
    if level == "ordinal":
        # Σ_{g=c..k} n_g − (n_c + n_k)/2, for c ≤ k (symmetric): from cumulative sums.
        cumulative = np.cumsum(n, axis=1)
        between = (
            cumulative[:, None, :] - cumulative[:, :, None] + (n[:, :, None] - n[:, None, :]) / 2
        )
        return between**2
    raise ValueError(f"no level of measurement {level!r}")


def _alpha_from(sums: np.ndarray, level: str, domain: Sequence[float]) -> np.ndarray:
    """Alpha of each resample from its summed coincidence matrix (resamples × values²)."""
    size = len(domain)
    o = sums.reshape(-1, size, size)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    delta = _distance(level, domain, n_c)
    observed = (o * delta).sum(axis=(1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - (n - 1) * observed / expected, np.nan)


def coincidences(data: Matrix, domain: Sequence[float]) -> np.ndarray:
    """Each pairable target's coincidence matrix, flattened (targets × values²):
    (n_c n_k − [c = k] n_c) / (m − 1), Krippendorff's (2011) o_ck of one unit."""
    counts = _counts(_pairable(data), domain)
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    outer -= np.einsum("uc,ck->uck", counts, np.eye(len(domain)))
    return (outer / (m - 1)[:, None, None]).reshape(len(counts), -1)


def alpha_from_coincidences(data: Matrix, level: str, domain: Sequence[float]) -> float:
    """Alpha from the per-target coincidences summed once: what every resample does, and
    equal to the package's value (a test holds them together)."""
    units = coincidences(data, domain)
    return float(_alpha_from(units.sum(axis=0, keepdims=True), level, domain)[0])


def alpha_interval(data: Matrix, level: str, domain: Sequence[float]) -> tuple[float, float]:
    """Bootstrap interval of alpha at ``level``: targets resampled with replacement."""
    return alpha_intervals(data, (level,), domain)[level]


def alpha_intervals(
    data: Matrix, levels: Sequence[str], domain: Sequence[float]
) -> dict[str, tuple[float, float]]:
    """Bootstrap intervals of alpha at several levels from the same resamples (each
    resample's coincidences are summed once and serve every level)."""
    sums = _resampled_sums(coincidences(data, domain))
    return {level: _percentiles(_alpha_from(sums, level, domain)) for level in levels}


def _weights(levels: Sequence[float], scheme: str) -> np.ndarray:
    """Disagreement weights of Cohen's kappa: 0 on the diagonal; 1 elsewhere (unweighted),
    |a − b| (linear) or (a − b)² (quadratic) between the two values (kappa is the same for
    any multiple of the weights, so a 1-5 scale gives Cohen's (1968) |i − j| weights, and a
    scale with a point nobody used keeps its true distances)."""
    values = np.asarray(levels, dtype=float)
    gap = np.abs(values[:, None] - values[None, :])
    if scheme == "unweighted":
        return (gap > 0).astype(float)
    if scheme == "linear":
        return gap
    if scheme == "quadratic":
        return gap**2
    raise ValueError(f"no kappa weighting {scheme!r}")


def _pairs(data: Matrix, domain: Sequence[float]) -> np.ndarray:
    """Targets both annotators rated, one-hot (first's value, second's value), flattened."""
    both = data[:, ~np.isnan(data).any(axis=0)]
    points = list(np.asarray(domain, dtype=float))
    size = len(points)
    rows = np.zeros((both.shape[1], size * size))
    for unit, (a, b) in enumerate(both.T):
        rows[unit, points.index(a) * size + points.index(b)] = 1.0
    return rows


def _kappa_from(sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
    size = len(weights)
    table = sums.reshape(-1, size, size)
    total = table.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = table / total[:, None, None]
        expected = share.sum(axis=2)[:, :, None] * share.sum(axis=1)[:, None, :]
        observed_d = (share * weights).sum(axis=(1, 2))
        expected_d = (expected * weights).sum(axis=(1, 2))
        return np.where(expected_d > 0, 1 - observed_d / expected_d, np.nan)


def cohen_kappa(
    data: Matrix, domain: Sequence[float], scheme: str = "unweighted"
) -> tuple[float, float, float, int]:
    """Cohen's kappa of two annotators (rows) on the targets both rated: (kappa, low,
    high, targets). Weighted kappa is 1 − Σ w·observed / Σ w·expected (Cohen 1968)."""
    if data.shape[0] != 2:
        raise ValueError("Cohen's kappa is for two annotators")
    units = _pairs(data, domain)
    if len(units) < 2:
        return (math.nan, math.nan, math.nan, len(units))
    weights = _weights(domain, scheme)
    value = float(_kappa_from(units.sum(axis=0, keepdims=True), weights)[0])
    if math.isnan(value):
        return (value, math.nan, math.nan, len(units))
    low, high = _interval(units, lambda sums: _kappa_from(sums, weights))
    return (value, low, high, len(units))


def _fleiss_units(data: Matrix, domain: Sequence[float]) -> np.ndarray:
    """Per rated target i with m_i ratings, n_ik of them value k: [m_i ≥ 2, P_i, 1,
    n_ik / m_i...], P_i = Σ n_ik (n_ik − 1) / (m_i (m_i − 1)) (0 below two ratings)."""
    counts = _counts(data, domain)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 1], m[m >= 1]
    pairable = m >= 2
    pairs = np.where(pairable, m * (m - 1), 1.0)
    agreement = np.where(pairable, ((counts**2).sum(axis=1) - m) / pairs, 0.0)
    shares = counts / m[:, None]
    return np.column_stack([pairable.astype(float), agreement, np.ones(len(m)), shares])


def _fleiss_from(sums: np.ndarray) -> np.ndarray:
    pairable, agreement, rated, shares = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3:]
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = agreement / pairable
        chance = ((shares / rated[:, None]) ** 2).sum(axis=1)
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def fleiss_kappa(data: Matrix, domain: Sequence[float]) -> tuple[float, float, float, int]:
    """Fleiss' kappa in the form for unequal numbers of ratings per target (Gwet 2014, as
    R's irrCAC ``fleiss.kappa.raw``), which is Fleiss' (1971) when every target has the same
    number: observed agreement averaged over the targets with two ratings or more, chance
    agreement from every rated target's shares of each value. (kappa, low, high, targets
    with two ratings or more)."""
    units = _fleiss_units(data, domain)
    targets = int(units[:, 0].sum())
    if targets < 2:
        return (math.nan, math.nan, math.nan, targets)
    value = float(_fleiss_from(units.sum(axis=0, keepdims=True))[0])
    if math.isnan(value):
        return (value, math.nan, math.nan, targets)
    low, high = _interval(units, _fleiss_from)
    return (value, low, high, targets)


def _agreeing_pairs(data: Matrix, domain: Sequence[float]) -> np.ndarray:
    counts = _counts(_pairable(data), domain)
    m = counts.sum(axis=1)
    return np.column_stack([(counts * (counts - 1)).sum(axis=1) / 2, m * (m - 1) / 2])


def percent_agreement(data: Matrix, domain: Sequence[float]) -> tuple[float, float, float, int]:
    """Share of pairs of ratings of the same target that are equal, over every target with
    two ratings or more: (share, low, high, targets)."""
    units = _agreeing_pairs(data, domain)
    if len(units) < 1:
        return (math.nan, math.nan, math.nan, 0)

    def share(sums: np.ndarray) -> np.ndarray:
        return np.asarray(sums[:, 0] / sums[:, 1], dtype=float)

    value = float(share(units.sum(axis=0, keepdims=True))[0])
    low, high = _interval(units, share) if len(units) > 1 else (math.nan, math.nan)
    return (value, low, high, len(units))


def resampling_counts(targets: int, seed: int = SEED) -> Iterator[np.ndarray]:
    """``RESAMPLES`` bootstrap resamples of ``targets`` targets as counts (how often each
    target is drawn), in chunks of at most a million cells: a large study never holds them
    all at once. The same targets and seed give the same resamples (kept for reuse while
    they are small: every coefficient of an item draws them)."""
    if targets * RESAMPLES <= _KEPT_CELLS:
        yield from (chunk.astype(float) for chunk in _kept_counts(targets, seed))
    else:
        yield from (chunk.astype(float) for chunk in _drawn_counts(targets, seed))


_KEPT_CELLS = 20_000_000
"""Resamples of up to 20,000 targets are kept, as bytes: 20 MB each, four sets at most."""


@lru_cache(maxsize=4)
def _kept_counts(targets: int, seed: int) -> tuple[np.ndarray, ...]:
    return tuple(_drawn_counts(targets, seed))


def _drawn_counts(targets: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    chunk = max(1, min(RESAMPLES, 1_000_000 // max(targets, 1)))
    left = RESAMPLES
    while left > 0:
        size = min(chunk, left)
        drawn = rng.integers(0, targets, size=(size, targets))
        drawn += np.arange(size)[:, None] * targets
        counts = np.bincount(drawn.ravel(), minlength=size * targets)
        # A target drawn more than 255 times out of n draws with p = 1/n: never in practice.
        yield np.minimum(counts, 255).astype(np.uint8).reshape(size, targets)
        left -= size


def _resampled_sums(units: np.ndarray) -> np.ndarray:
    """Each resample's sum of the per-target rows ``units`` (resamples × columns)."""
    return np.concatenate([counts @ units for counts in resampling_counts(len(units))])


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval; resamples where the statistic is undefined are left out (and
    with fewer than half of them defined there is no interval)."""
    values = values[~np.isnan(values)]
    if len(values) < RESAMPLES / 2:
        return (math.nan, math.nan)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def _interval(
    units: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` (a function of summed per-target rows)."""
    return _percentiles(statistic(_resampled_sums(units)))
