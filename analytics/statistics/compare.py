"""Comparing systems with rank tests chosen by the study's design, and saying which.

Ratings are ordinal, so every test is a rank test. The unit of analysis is the participant:
answers of one participant about one system (several tasks, several turns) are averaged
first, because they are not independent observations.

- between-subjects, two systems: Mann–Whitney U, rank-biserial r (Wendt 1972);
- between-subjects, more: Kruskal–Wallis H with ε² = H / (n − 1) (Tomczak & Tomczak 2014),
  then Mann–Whitney U for every pair, Holm-corrected;
- within-subject (each participant met several systems), two systems: Wilcoxon signed-rank,
  matched-pairs rank-biserial r (Kerby 2014); more: Friedman with Kendall's W, then
  Wilcoxon for every pair, Holm-corrected.

A comparison with too few participants per system, or with identical answers, gets a row
whose ``note`` says so and no p-value.

Systems come in the study's order (``systems``: the report's columns), others after them by
name, and a two-system effect reads that way round: the first system over the second, said
in ``effect_direction`` ("shop-v1 over shop-v0"; empty for an effect without a direction,
as ε² or Kendall's W).

Every row says in ``p_method`` how its p-value was computed, because R's defaults differ
from scipy's in places: Mann–Whitney and Wilcoxon are exact as in R's ``wilcox.test`` (no
ties, fewer than 50 per group), otherwise the normal approximation with continuity and tie
corrections, except that a Wilcoxon test of at most 13 pairs with ties or zero differences
takes the exact permutation distribution of its signs (R would approximate);
Kruskal–Wallis and Friedman use the χ² approximation with the tie correction, as R does.
A p-value from random tables carries its Monte Carlo standard error in ``p_mc_error``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.stats import PermutationMethod, chi2, mannwhitneyu, rankdata, tiecorrect

from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS
from analytics.statistics import effect_intervals as ci

COLUMNS = [
    "design",
    "test",
    "kind",
    "groups",
    "n_per_group",
    "n_total",
    "statistic_name",
    "statistic",
    "p",
    "p_method",
    "p_mc_error",
    "p_holm",
    "effect_name",
    "effect",
    "effect_ci_low",
    "effect_ci_high",
    "effect_ci_method",
    "effect_direction",
    "note",
]
Row = dict[str, Any]
"""One line of the table, a cell per column of ``COLUMNS`` (strings, counts, floats)."""

EXACT = "exact"
NORMAL = "normal approximation with continuity and tie corrections"
CHI2_TIES = "χ² approximation with tie correction"
SIGN_PERMUTATION = "exact permutation distribution of the signs (ties or zero differences)"
EXACT_LIMIT = 50
"""R's ``wilcox.test`` computes exact p-values below 50 observations per group, when
nothing is tied (scipy's ``auto`` switches at 8 for Mann–Whitney)."""
UNPAIRED = "no participant answered it for two systems: compared between subjects"
"""The note of a within-subjects study's measure that nobody answered for two systems."""
PERMUTATION_LIMIT = 13
"""Up to 2^13 sign patterns: enumerated, as scipy's ``wilcoxon`` does with ties."""


def detect_design(sessions: pd.DataFrame, declared: str | None = None) -> str:
    """``"within"`` when the study says so or any participant met more than one system."""
    if declared == "within":
        return "within"
    met = sessions.groupby("participant_id", observed=True)["system_id"].nunique()
    return "within" if (met > 1).any() else "between"


def compare_systems(
    data: pd.DataFrame,
    *,
    dv: str = "score",
    between: str = "system_id",
    subject: str = "participant_id",
    within: bool | None = None,
    systems: Sequence[str] = (),
    min_n: int = 5,
) -> pd.DataFrame:
    """Compare ``dv`` across the groups in ``between``, taken in the order of ``systems``
    (the module docstring says the tests and the effects' direction). ``within=None``
    decides from the data (a subject in several groups)."""
    frame = data[[subject, between, dv]].astype({subject: object, between: object, dv: float})
    # Rows without a participant or a system are left out by the groupby; the pseudo
    # systems are left out of the means, a row per participant rather than per answer.
    frame = frame[frame[dv].notna()]
    means = frame.groupby([subject, between])[dv].mean().rename("dv").reset_index()
    means = means[~means[between].isin([NO_SYSTEM, SEVERAL_SYSTEMS])]
    paired = bool((means.groupby(subject)[between].nunique() > 1).any())
    # A within-subjects study may ask a form after one of its tasks only: then no participant
    # answered this measure for two systems, there is nothing to pair, and the groups are
    # independent samples (the rows say so).
    unpaired = within is True and not paired
    within = paired if within is None else within and paired
    groups = in_order(means[between].unique(), systems)
    design = "within" if within else "between"
    if len(groups) < 2:
        found = groups[0] if groups else "no system"
        return table_of([row_of(design, "none", groups, {}, note=f"only one system ({found})")])
    if within:
        wide = means.pivot(index=subject, columns=between, values="dv")[groups]
        return table_of(_within(wide, groups, min_n))
    samples = {g: means.loc[means[between] == g, "dv"].to_numpy() for g in groups}
    rows = _between(samples, min_n)
    if unpaired:
        for row in rows:
            row["note"] = "; ".join(x for x in (UNPAIRED, row["note"]) if x)
    return table_of(rows)


def in_order(found: Iterable[Any], systems: Sequence[str] = ()) -> list[str]:
    """The groups ``found``, those of ``systems`` first in its order, then the others by
    name: the order the report's columns take, which an effect's sign follows."""
    names = {str(g) for g in found}
    return [s for s in systems if s in names] + sorted(names - set(systems))


def direction(a: str, b: str) -> str:
    """Which way round a two-system effect reads: ``a``'s over ``b``'s."""
    return f"{a} over {b}"


def table_of(rows: list[Row]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


def row_of(design: str, test: str, groups: Sequence[str], n: dict[str, int], **fields: Any) -> Row:
    """One line of the table; ``n_total`` counts participants (once each, within-subject)."""
    row = dict.fromkeys(COLUMNS)
    row.update(
        design=design,
        test=test,
        kind="omnibus",
        groups=" vs ".join(groups) if len(groups) == 2 else ", ".join(groups),
        n_per_group=n,
        n_total=sum(n.values()),
        statistic=math.nan,
        p=math.nan,
        p_mc_error=math.nan,
        p_holm=math.nan,
        effect=math.nan,
        effect_ci_low=math.nan,
        effect_ci_high=math.nan,
    )
    row.update(fields)
    return row


def too_few(n: dict[str, int], min_n: int) -> str | None:
    short = [f"{g} has {k}" for g, k in n.items() if k < min_n]
    if short:
        return f"too few participants: {', '.join(short)} (at least {min_n} per system needed)"
    return None


def _constant(values: np.ndarray) -> str | None:
    if len(values) and np.all(values == values[0]):
        return f"every answer is {values[0]:g}: nothing to compare"
    return None


def _mwu(design: str, a: str, x: np.ndarray, b: str, y: np.ndarray, min_n: int, kind: str) -> Row:
    """Mann–Whitney U of the first group (as scipy and pingouin report it) and the
    rank-biserial r = 2U/(n1·n2) − 1, positive when the first group rates higher. Computed
    from U rather than with pingouin's ``mwu``, which builds an n1 × n2 matrix."""
    n = {a: len(x), b: len(y)}
    fields = {"statistic_name": "U", "effect_name": "rank-biserial r", "kind": kind}
    fields["effect_direction"] = direction(a, b)
    note = too_few(n, min_n) or _constant(np.concatenate([x, y]))
    if note:
        return row_of(design, "Mann–Whitney U", [a, b], n, note=note, **fields)
    both = np.concatenate([x, y])
    tied = len(np.unique(both)) < len(both)
    exact = not tied and max(len(x), len(y)) < EXACT_LIMIT
    u, p = mannwhitneyu(x, y, alternative="two-sided", method="exact" if exact else "asymptotic")
    r = 2 * float(u) / (len(x) * len(y)) - 1
    return row_of(
        design,
        "Mann–Whitney U",
        [a, b],
        n,
        statistic=float(u),
        p=float(p),
        p_method=EXACT if exact else NORMAL,
        p_holm=float(p),
        effect=r,
        **ci.rank_biserial(r, len(x), len(y)).fields(),
        **fields,
    )


def _between(samples: dict[str, np.ndarray], min_n: int) -> list[Row]:
    groups = list(samples)
    if len(groups) == 2:
        a, b = groups
        return [_mwu("between", a, samples[a], b, samples[b], min_n, "omnibus")]
    n = {g: len(v) for g, v in samples.items()}
    fields = {"statistic_name": "H", "effect_name": "ε²"}
    everything = np.concatenate(list(samples.values()))
    note = too_few(n, min_n) or _constant(everything)
    if note:
        omnibus = row_of("between", "Kruskal–Wallis H", groups, n, note=note, **fields)
    else:
        h, p = kruskal_wallis(samples)
        interval = ci.epsilon_squared(list(samples.values()))
        omnibus = row_of(
            "between", "Kruskal–Wallis H", groups, n, statistic=h, p=p, p_method=CHI2_TIES,
            p_holm=p, effect=h / (len(everything) - 1), **interval.fields(), **fields,
        )  # fmt: skip
    pairs = [
        _mwu("between", a, samples[a], b, samples[b], min_n, "pairwise")
        for a, b in itertools.combinations(groups, 2)
    ]
    return [omnibus, *_holm(pairs)]


def kruskal_wallis(samples: dict[str, np.ndarray]) -> tuple[float, float]:
    """Kruskal–Wallis H with the tie correction and its χ² p-value, computed as
    ``pingouin.kruskal`` does, step for step (the same floats), without importing pingouin:
    its import (matplotlib, seaborn, xarray) took longer than a large report's tests."""
    values = {g: v[~np.isnan(v)] for g, v in samples.items()}
    ranks = rankdata(np.concatenate(list(values.values())))
    ends = np.cumsum([len(v) for v in values.values()])
    sums = dict(zip(values, (part.sum() for part in np.split(ranks, ends[:-1])), strict=True))
    n = len(ranks)
    kept = sorted(g for g, v in values.items() if len(v))  # pandas' groupby order
    sum_rk_grp = np.array([sums[g] for g in kept])
    n_per_grp = np.array([len(values[g]) for g in kept])
    h = (12 / (n * (n + 1)) * np.sum(sum_rk_grp**2 / n_per_grp)) - 3 * (n + 1)
    h /= tiecorrect(ranks)
    return float(h), float(chi2.sf(h, len(kept) - 1))


def holm(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down correction of these p-values (none NaN), in their order: the
    running maximum of the sorted p-values times m, m − 1, …, 1, at most 1, as
    ``pingouin.multicomp(method="holm")`` and R's ``p.adjust`` compute it."""
    values = np.asarray(p, dtype=float)
    order = np.argsort(values)
    corrected = np.empty(values.size)
    corrected[order] = np.maximum.accumulate(values[order] * np.arange(values.size, 0, -1))
    return np.clip(corrected, None, 1)


def _holm(rows: list[Row]) -> list[Row]:
    tested = [r for r in rows if not math.isnan(r["p"])]
    if tested:
        corrected = holm([r["p"] for r in tested])
        for row, p in zip(tested, corrected, strict=True):
            row["p_holm"] = float(p)
    return rows


def _wilcoxon(wide: pd.DataFrame, a: str, b: str, min_n: int, kind: str) -> Row:
    """Wilcoxon signed-rank on the participants who rated both systems; the effect is the
    matched-pairs rank-biserial r (positive when ``a`` is rated higher)."""
    pair = wide[[a, b]].dropna()
    n = {a: len(pair), b: len(pair)}
    fields: Row = {"statistic_name": "W", "effect_name": "matched-pairs rank-biserial r"}
    fields |= {"kind": kind, "effect_direction": direction(a, b)}
    fields["n_total"] = len(pair)  # participants, each counted once
    test = "Wilcoxon signed-rank"
    note = too_few(n, min_n)
    if not note and (pair[a] == pair[b]).all():
        note = "every participant rated both systems the same: nothing to compare"
    if note:
        return row_of("within", test, [a, b], n, note=note, **fields)
    x, y = pair[a].to_numpy(dtype=float), pair[b].to_numpy(dtype=float)
    method, how = _signed_rank_method(x - y)
    import pingouin as pg  # here: a report without this test never pays for its import

    result = pg.wilcoxon(x, y, method=method).iloc[0]
    p, r = float(result["p_val"]), float(result["RBC"])
    interval = ci.matched_rank_biserial(r, int(np.count_nonzero(x - y)))
    return row_of(
        "within", test, [a, b], n, statistic=float(result["W_val"]), p=p, p_method=how,
        p_holm=p, effect=r, **interval.fields(), **fields,
    )  # fmt: skip


def _signed_rank_method(differences: np.ndarray) -> tuple[object, str]:
    """The p-value method for these paired differences, and its words (module docstring).
    pingouin passes ``correction=True`` (R's continuity correction) to scipy."""
    nonzero = differences[differences != 0]
    irregular = len(nonzero) < len(differences) or len(np.unique(np.abs(nonzero))) < len(nonzero)
    if not irregular and len(nonzero) < EXACT_LIMIT:
        return "exact", EXACT
    if irregular and len(differences) <= PERMUTATION_LIMIT:
        # At least as many resamples as sign patterns: scipy enumerates them all (exact).
        return PermutationMethod(n_resamples=2**PERMUTATION_LIMIT), SIGN_PERMUTATION
    return "asymptotic", NORMAL


def _within(wide: pd.DataFrame, groups: list[str], min_n: int) -> list[Row]:
    if len(groups) == 2:
        return [_wilcoxon(wide, groups[0], groups[1], min_n, "omnibus")]
    complete = wide.dropna()
    n = dict.fromkeys(groups, len(complete))
    fields = {"statistic_name": "Q", "effect_name": "Kendall's W", "n_total": len(complete)}
    note = too_few(n, min_n) or _constant(complete.to_numpy().ravel())
    if note:
        omnibus = row_of("within", "Friedman", groups, n, note=note, **fields)
    else:
        # Flat columns stack to a Series (pandas-stubs allows a DataFrame too).
        stacked = cast(pd.Series, complete.rename_axis(index="subject", columns="group").stack())
        long = stacked.rename("dv")
        import pingouin as pg  # here: a report without this test never pays for its import

        result = pg.friedman(long.reset_index(), dv="dv", within="group", subject="subject")
        q, w, p = (float(result.iloc[0][k]) for k in ("Q", "W", "p_unc"))
        interval = ci.kendalls_w(complete.to_numpy(dtype=float))
        omnibus = row_of(
            "within", "Friedman", groups, n, statistic=q, p=p, p_method=CHI2_TIES, p_holm=p,
            effect=w, **interval.fields(), **fields,
        )  # fmt: skip
    pairs = [_wilcoxon(wide, a, b, min_n, "pairwise") for a, b in itertools.combinations(groups, 2)]
    return [omnibus, *_holm(pairs)]


ADJUST = ("headline", "all")
"""Holm's family: each measure's headline (omnibus) test, or every test in the table."""


def family_holm(table: pd.DataFrame, across: str = "headline") -> int:
    """Holm's correction across every measure's omnibus test, written into ``p_family``
    (the raw ``p`` stays beside it): testing several items or constructs is a family.
    Pairwise rows keep their correction within their measure, unless ``across="all"``
    puts every tested row, pairs included, into the family. Returns the family's size."""
    if across not in ADJUST:
        raise ValueError(f"no Holm family {across!r}: one of {', '.join(ADJUST)}")
    omnibus = table["p"].notna()
    if across == "headline":
        omnibus &= table["kind"] == "omnibus"
    table["p_family"] = np.nan
    if omnibus.any():
        table.loc[omnibus, "p_family"] = holm(table.loc[omnibus, "p"].to_numpy(dtype=float))
    return int(omnibus.sum())
