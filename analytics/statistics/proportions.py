"""Comparing systems on yes/no and choice items: proportions, not ranks.

A yes/no or choice answer is a category, not a point on an ordered scale, so systems are
compared on how often each answer was given (the rank tests of
``analytics.statistics.compare`` would treat "no" < "yes" and options as ordered):

- between-subjects, two systems: Fisher's exact test, as R's ``fisher.test``: for yes/no the
  2 × 2 table with R's estimate, the conditional maximum-likelihood odds ratio (the odds of
  the item's first answer, e.g. yes, with the first system over the second, in the study's
  order); for more
  options the Freeman–Halton extension, every table with the observed margins enumerated,
  with Cramér's V;
- between-subjects, more systems: Pearson's χ² without continuity correction (R's
  ``chisq.test(correct = FALSE)``) with Cramér's V = √(χ² / (n (min(r, c) − 1))); when
  expected counts are small (Cochran's rule: any below 1, or more than a fifth below 5) its
  p-value comes from random tables with the observed margins instead (R's
  ``simulate.p.value``); then Fisher's test for every pair, Holm-corrected;
- within-subject, yes/no: McNemar's test for two systems (exact binomial p on the discordant
  pairs, with their odds ratio), Cochran's Q for more (η²_Q = Q / (n (k − 1))), then
  McNemar for every pair, Holm-corrected. Choice items with more than two options are not
  tested within subjects: their counts are in the report.

The unit is the participant, as in the rank tests: a participant who answered an item
several times about one system (after each task, or after every reply) counts once, with the
answer they gave most often (the latest on a tie), and the rows say so. Beside them, a
two-answer item answered several times gets the repeated-measures model of every answer: a
logistic GEE (binomial, exchangeable working correlation, robust standard errors, as
geepack's ``geeglm``) with the participants as clusters, its Wald χ² test of the systems and,
for two systems, the odds ratio of the first answer with its Wald interval. The rule for too
few participants is the rank tests'.
Rows have the columns of ``analytics.statistics.compare.COLUMNS``, so both kinds share one table.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.special import gammaln
from scipy.stats import MonteCarloMethod, chi2_contingency, fisher_exact
from scipy.stats.contingency import odds_ratio

from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS
from analytics.statistics import effect_intervals as ci
from analytics.statistics.clustered import compare_success
from analytics.statistics.compare import (
    EXACT,
    Row,
    direction,
    holm,
    in_order,
    row_of,
    table_of,
    too_few,
)

__all__ = ["compare_proportions", "fisher_exact_two_rows", "monte_carlo_error", "one_answer_each"]

RESAMPLES = 99_999
SEED = 0
"""Random tables for a p-value that cannot be exact: fixed, so that a report is reproducible;
enough that the Monte Carlo standard error near p = 0.05, √(0.05 · 0.95 / B), is 0.0007."""
TABLE_LIMIT = 2_000_000
"""Tables enumerated for an exact Freeman–Halton p-value before falling back on sampling."""
RANDOM_TABLES = f"Monte Carlo: {RESAMPLES:,} random tables with the observed margins (seed {SEED})"
CHI2 = "χ² approximation, no continuity correction"
FREEMAN_HALTON = "exact (every table with the observed margins)"
MCNEMAR_EXACT = "exact (binomial on the discordant pairs)"
COCHRAN_CHI2 = "χ² approximation"
_RELATIVE = 1 + 1e-7
"""R's ``fisher.test`` counts tables as extreme as the observed one within this ratio."""


def one_answer_each(
    data: pd.DataFrame,
    *,
    answer: str = "answer",
    between: str = "system_id",
    subject: str = "participant_id",
) -> pd.DataFrame:
    """One answer per participant and system: the most frequent, the latest on a tie
    (rows are taken to be in answering order)."""
    frame = data[[subject, between, answer]].dropna()
    frame = frame[~frame[between].isin([NO_SYSTEM, SEVERAL_SYSTEMS])]
    frame = frame.astype({subject: object, between: object, answer: object})
    frame = frame.assign(_order=np.arange(len(frame)))
    tally = frame.groupby([subject, between, answer], sort=False).agg(
        times=("_order", "size"), last=("_order", "max")
    )
    best = tally.reset_index().sort_values(["times", "last"], ascending=False, kind="stable")
    chosen = best.drop_duplicates([subject, between]).sort_values([between, subject])
    return chosen[[subject, between, answer]].reset_index(drop=True)


def compare_proportions(
    data: pd.DataFrame,
    *,
    answer: str = "answer",
    between: str = "system_id",
    subject: str = "participant_id",
    within: bool | None = None,
    order: Sequence[Any] = (),
    labels: Mapping[Any, str] | None = None,
    systems: Sequence[str] = (),
    min_n: int = 5,
) -> pd.DataFrame:
    """Compare how often each ``answer`` was given across the groups in ``between``, taken
    in the order of ``systems`` (an odds ratio is the first system's over the second's); see
    the module docstring for the tests. ``order`` lists the answers as the item offers them
    (the first one is the odds ratio's, named by ``labels``); ``within=None`` decides from
    the data."""
    frame = one_answer_each(data, answer=answer, between=between, subject=subject)
    if within is None:
        within = bool((frame.groupby(subject)[between].nunique() > 1).any())
    groups = in_order(frame[between].unique(), systems)
    found = set(frame[answer])
    categories = [a for a in order if a in found] + sorted(
        (a for a in found if a not in set(order)), key=str
    )
    design = "within" if within else "between"
    if len(groups) < 2:
        only = groups[0] if groups else "no system"
        return table_of([row_of(design, "none", groups, {}, note=f"only one system ({only})")])
    if within:
        wide = frame.pivot(index=subject, columns=between, values=answer)[groups]
        rows = _within(wide, groups, categories, min_n, _name(categories, labels))
    else:
        counts = pd.crosstab(frame[between], frame[answer]).reindex(
            index=groups, columns=categories, fill_value=0
        )
        rows = _between(counts, min_n, labels or {})
    given = data[[subject, between, answer]].dropna()
    given = given[given[between].isin(groups)]
    if len(given) > len(frame):
        # Some participant answered several times about one system (after every reply):
        # the tests above saw each one's most frequent answer, which the rows say, and
        # every answer goes into a logistic GEE clustered by participant beside them.
        reduced = (
            f"each participant's most frequent answer: {len(given):,} answers of "
            f"{frame[subject].nunique():,} participants"
        )
        for row in rows:
            row["note"] = "; ".join(x for x in (reduced, row["note"]) if x)
        if len(categories) == 2:
            rows.append(_every_answer(given, answer, between, subject, groups, categories, design,
                                      _name(categories, labels)))  # fmt: skip
    return table_of(rows)


EVERY_ANSWER = "logistic GEE of every answer, clustered by participant"
GEE_WALD = (
    "Wald χ² of the systems' terms with robust (sandwich) standard errors, exchangeable "
    "working correlation (as geepack's geeglm)"
)


def _every_answer(
    given: pd.DataFrame,
    answer: str,
    between: str,
    subject: str,
    groups: list[str],
    categories: list[Any],
    design: str,
    first: str,
) -> Row:
    """The repeated-measures model of a two-answer item: the odds of its first answer by
    system, from every answer, participants as clusters (``clustered.compare_success``),
    with the first system's odds ratio over the second's where there are two."""
    outcomes = given.assign(_first=(given[answer] == categories[0]).astype(float))
    test, odds = compare_success(outcomes, value="_first", cluster=subject, group=between)
    people = given.groupby(between)[subject].nunique()
    n = {g: int(people.get(g, 0)) for g in groups}
    fields: Row = {"kind": "repeated", "statistic_name": "Wald χ²", "p_method": GEE_WALD}
    fields["n_total"] = int(given[subject].nunique())
    if len(groups) == 2:
        fields |= {"effect_name": f"odds ratio of {first}",
                   "effect_direction": direction(groups[0], groups[1])}  # fmt: skip
    if test.empty or test["note"].iloc[0] is not None:
        note = "not fitted" if test.empty else str(test["note"].iloc[0])
        return row_of(design, EVERY_ANSWER, groups, n, note=note, **fields)
    found = test.iloc[0]
    p = float(found["p"])
    row = row_of(
        design, EVERY_ANSWER, groups, n, statistic=float(found["chi2"]), p=p, p_holm=p,
        **fields,
    )  # fmt: skip
    if len(groups) == 2:
        (term,) = odds.to_dict("records")
        ratio, low, high = (float(term[k]) for k in ("odds_ratio", "ci_low", "ci_high"))
        if term["system_id"] == groups[1]:  # the model's reference was the first system
            ratio, low, high = 1 / ratio, 1 / high, 1 / low
        row.update(effect=ratio, effect_ci_low=low, effect_ci_high=high,
                   effect_ci_method=ci.WALD_ROBUST)  # fmt: skip
    return row


def _name(categories: Sequence[Any], labels: Mapping[Any, str] | None) -> str:
    """The answer an odds ratio is about: the item's first, by its label."""
    if not categories:
        return ""
    first = categories[0]
    return str((labels or {}).get(first, first))


def _odds_ratio_name(held: Sequence[Any], answers: Sequence[Any], labels: Mapping[Any, str]) -> str:
    """The odds ratio of the first answer a 2 × 2 table holds; when the item has answers the
    table does not hold, the other one is named too, as it is not "every other answer"."""
    first, other = (str(labels.get(a, a)) for a in held)
    if len(answers) <= 2:
        return f"odds ratio of {first}"
    return f"odds ratio of {first} vs {other}"


def _one_answer(categories: Sequence[Any]) -> str | None:
    if len(categories) < 2:
        only = categories[0] if categories else "missing"
        return f"every answer is {only}: nothing to compare"
    return None


def _between(counts: pd.DataFrame, min_n: int, labels: Mapping[Any, str]) -> list[Row]:
    groups = [str(g) for g in counts.index]
    if len(groups) == 2:
        return [_fisher(counts, min_n, "omnibus", labels)]
    n = {str(g): int(v) for g, v in counts.sum(axis=1).items()}
    fields: Row = {"effect_name": "Cramér's V"}
    note = too_few(n, min_n) or _one_answer(list(counts.columns))
    if note:
        omnibus = row_of("between", "χ² test of independence", groups, n, note=note, **fields)
    else:
        omnibus = _chi2(counts, n, fields)
    pairs = [
        _fisher(counts.loc[[a, b]], min_n, "pairwise", labels)
        for a, b in itertools.combinations(counts.index, 2)
    ]
    return [omnibus, *_holm(pairs)]


def _chi2(counts: pd.DataFrame, n: dict[str, int], fields: Row) -> Row:
    """Pearson's χ² and Cramér's V from pingouin; a Monte Carlo p-value when Cochran's rule
    says the χ² distribution is a poor guide."""
    long = cast(pd.Series, counts.stack()).rename("count").reset_index()
    long.columns = pd.Index(["group", "answer", "count"])
    long = long.loc[long.index.repeat(long["count"])].drop(columns="count")
    import pingouin as pg  # here: a report without this test never pays for its import

    with warnings.catch_warnings():
        # pingouin warns on low counts; Cochran's rule below decides what to do about them.
        warnings.filterwarnings("ignore", "Low count on", UserWarning)
        # An answer a system never got is a zero cell: the log-likelihood and Neyman rows of
        # pingouin's table divide by it, the Pearson row used here does not.
        warnings.filterwarnings("ignore", "divide by zero encountered", RuntimeWarning)
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        expected, _, table = pg.chi2_independence(long, x="group", y="answer", correction=False)
    pearson = table.set_index("test").loc["pearson"]
    chi2, dof = float(pearson["chi2"]), int(pearson["dof"])
    p, method = float(pearson["pval"]), CHI2
    cells = expected.to_numpy()
    if (cells < 1).any() or (cells < 5).mean() > 0.2:
        sampled = chi2_contingency(
            counts.to_numpy(),
            correction=False,
            method=MonteCarloMethod(n_resamples=RESAMPLES, rng=np.random.default_rng(SEED)),
        )
        p, method = float(sampled.pvalue), RANDOM_TABLES + ", as expected counts are small"
        fields["p_mc_error"] = monte_carlo_error(p)
    interval = ci.cramers_v(counts.loc[:, counts.sum(axis=0) > 0].to_numpy())
    return row_of(
        "between", "χ² test of independence", list(n), n, statistic_name=f"χ²({dof})",
        statistic=chi2, p=p, p_method=method, p_holm=p, effect=float(pearson["cramer"]),
        **interval.fields(), **fields,
    )  # fmt: skip


def _fisher(counts: pd.DataFrame, min_n: int, kind: str, labels: Mapping[Any, str]) -> Row:
    """Fisher's exact test of two groups; for 2 × 2 the odds ratio of the first answer the
    two groups gave (the first group over the second), else Cramér's V."""
    answers = list(counts.columns)
    counts = counts.loc[:, counts.sum(axis=0) > 0]
    groups = [str(g) for g in counts.index]
    n = {str(g): int(v) for g, v in counts.sum(axis=1).items()}
    binary = counts.shape[1] == 2
    ratio = _odds_ratio_name(list(counts.columns), answers, labels) if binary else "Cramér's V"
    fields: Row = {"kind": kind, "effect_name": ratio}
    if binary:
        fields["effect_direction"] = direction(*groups)
    note = too_few(n, min_n) or _one_answer(list(counts.columns))
    if note:
        return row_of("between", "Fisher's exact test", groups, n, note=note, **fields)
    table = counts.to_numpy(dtype=np.int64)
    if binary:
        p, method = float(fisher_exact(table).pvalue), EXACT
        effect = float(odds_ratio(table, kind="conditional").statistic)
        interval = ci.conditional_odds_ratio(table)
    else:
        exact = fisher_exact_two_rows(table)
        if exact is None:
            sampling = MonteCarloMethod(n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
            p, method = float(fisher_exact(table, method=sampling).pvalue), RANDOM_TABLES
            fields["p_mc_error"] = monte_carlo_error(p)
        else:
            p, method = exact, FREEMAN_HALTON
        effect = cramers_v(table)
        interval = ci.cramers_v(table)
    return row_of(
        "between", "Fisher's exact test", groups, n, p=p, p_method=method, p_holm=p,
        effect=effect, **interval.fields(), **fields,
    )  # fmt: skip


def monte_carlo_error(p: float, tables: int = RESAMPLES) -> float:
    """Standard error of a p-value estimated from ``tables`` random tables, √(p (1 − p) / B):
    how far another seed's p would typically be."""
    return math.sqrt(p * (1 - p) / tables)


def cramers_v(table: np.ndarray) -> float:
    """√(χ² / (n (min(r, c) − 1))) with Pearson's χ² uncorrected."""
    chi2 = float(chi2_contingency(table, correction=False).statistic)
    return math.sqrt(chi2 / (table.sum() * (min(table.shape) - 1)))


def fisher_exact_two_rows(table: np.ndarray, limit: int = TABLE_LIMIT) -> float | None:
    """Freeman–Halton exact p-value of a 2 × k table: the probability of every table with
    the same margins that is no more likely than the observed one (R's ``fisher.test``).
    ``None`` when more than ``limit`` tables would have to be enumerated."""
    table = np.asarray(table, dtype=np.int64)
    columns, first = table.sum(axis=0), int(table[0].sum())
    total = int(columns.sum())

    def log_choose(n: np.ndarray | int, k: np.ndarray | int) -> np.ndarray:
        return np.asarray(
            gammaln(np.add(n, 1)) - gammaln(np.add(k, 1)) - gammaln(np.subtract(n, k) + 1)
        )

    sums, logs = np.zeros(1, dtype=np.int64), np.zeros(1)
    remaining = int(columns.sum())
    for size in columns.tolist():
        remaining -= size
        x = np.arange(size + 1)
        sums = (sums[:, None] + x[None, :]).ravel()
        logs = (logs[:, None] + log_choose(size, x)[None, :]).ravel()
        feasible = (sums <= first) & (sums + remaining >= first)
        sums, logs = sums[feasible], logs[feasible]
        if len(sums) > limit:
            return None
    logs = logs - log_choose(total, first)
    observed = float(np.sum(log_choose(columns, table[0])) - log_choose(total, first))
    extreme = logs <= observed + math.log(_RELATIVE)
    return float(min(1.0, np.exp(logs[extreme]).sum()))


def _holm(rows: list[Row]) -> list[Row]:
    tested = [r for r in rows if not math.isnan(r["p"])]
    if tested:
        corrected = holm([r["p"] for r in tested])
        for row, p in zip(tested, corrected, strict=True):
            row["p_holm"] = float(p)
    return rows


def _within(
    wide: pd.DataFrame, groups: list[str], categories: list[Any], min_n: int, first: str
) -> list[Row]:
    if len(categories) > 2:
        n = dict.fromkeys(groups, len(wide.dropna()))
        why = "no within-subject test for answers with more than two options: see the counts"
        return [row_of("within", "none", groups, n, note=why, n_total=len(wide.dropna()))]
    if len(groups) == 2:
        return [_mcnemar(wide, groups[0], groups[1], categories, min_n, "omnibus", first)]
    complete = wide.dropna()
    n = dict.fromkeys(groups, len(complete))
    fields: Row = {"statistic_name": "Q", "effect_name": "η²_Q", "n_total": len(complete)}
    note = too_few(n, min_n) or _one_answer(categories)
    if not note and (complete.nunique(axis=1) == 1).all():
        note = "every participant gave each system the same answer: nothing to compare"
    if note:
        omnibus = row_of("within", "Cochran's Q", groups, n, note=note, **fields)
    else:
        hits = (complete == categories[0]).astype(int)
        long = hits.rename_axis(index="subject", columns="group").stack().rename("dv")
        import pingouin as pg  # here: a report without this test never pays for its import

        result = pg.cochran(long.reset_index(), dv="dv", within="group", subject="subject")
        q, p = float(result["Q"].iloc[0]), float(result["p_unc"].iloc[0])
        interval = ci.cochran_eta(hits.to_numpy())
        omnibus = row_of(
            "within", "Cochran's Q", groups, n, statistic=q, p=p, p_method=COCHRAN_CHI2,
            p_holm=p, effect=q / (len(complete) * (len(groups) - 1)), **interval.fields(),
            **fields,
        )  # fmt: skip
    pairs = [
        _mcnemar(wide, a, b, categories, min_n, "pairwise", first)
        for a, b in itertools.combinations(groups, 2)
    ]
    return [omnibus, *_holm(pairs)]


def _mcnemar(
    wide: pd.DataFrame, a: str, b: str, categories: list[Any], min_n: int, kind: str, first: str
) -> Row:
    """McNemar's test of the participants who answered about both systems; the effect is
    the matched-pairs odds ratio (first answer with ``a`` only) / (with ``b`` only). The
    statistic is χ² with continuity correction, as R's ``mcnemar.test``; p is exact."""
    pair = wide[[a, b]].dropna()
    n = {a: len(pair), b: len(pair)}
    ratio = f"matched-pairs odds ratio of {first}" if first else "matched-pairs odds ratio"
    fields: Row = {"statistic_name": "χ² (corrected)", "effect_name": ratio}
    fields |= {"kind": kind, "n_total": len(pair), "effect_direction": direction(a, b)}
    test = "McNemar"
    note = too_few(n, min_n) or _one_answer(categories)
    if not note and (pair[a] == pair[b]).all():
        note = "every participant gave both systems the same answer: nothing to compare"
    if note:
        return row_of("within", test, [a, b], n, note=note, **fields)
    target = categories[0]
    only_a = int(((pair[a] == target) & (pair[b] != target)).sum())
    only_b = int(((pair[a] != target) & (pair[b] == target)).sum())
    hits = pd.DataFrame(
        {"x": (pair[a] == target).astype(int), "y": (pair[b] == target).astype(int)}
    )
    import pingouin as pg  # here: a report without this test never pays for its import

    _, result = pg.chi2_mcnemar(hits, "x", "y")
    p = float(result["p_exact"].iloc[0])
    effect = only_a / only_b if only_b else math.inf
    interval = ci.matched_odds_ratio(only_a, only_b)
    return row_of(
        "within", test, [a, b], n, statistic=float(result["chi2"].iloc[0]), p=p,
        p_method=MCNEMAR_EXACT, p_holm=p, effect=effect, **interval.fields(), **fields,
    )  # fmt: skip
