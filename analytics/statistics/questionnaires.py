"""Questionnaire statistics: tidy DataFrame in, tidy DataFrame out (pingouin's style).

Every function takes the ``responses`` frame of ``analytics.data.loading`` (or a slice of it) and
returns one row per group and measure, with the numbers behind every claim (n, SD, IQR,
the interval), so that the report only formats. Item tables describe answers as given;
construct scores, alphas and comparisons use ``score``, where reverse items are recoded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy
from scipy.stats import f as f_distribution
from scipy.stats import norm

from analytics.data.grouping import group_key
from analytics.data.loading import (
    NO_SYSTEM,
    NUMERIC_TYPES,
    ORDER_TYPES,
    POINT_TYPES,
    SEVERAL_SYSTEMS,
)
from analytics.statistics.compare import COLUMNS as COMPARE_COLUMNS
from analytics.statistics.compare import compare_systems, detect_design
from bot.core.vocabulary import AnswerStatus, Moment

__all__ = [
    "ALL_SYSTEMS",
    "COMPARE_COLUMNS",
    "IDIAL_ASPECTS",
    "answer_distribution",
    "answer_labels",
    "answered_closed",
    "compare_systems",
    "construct_reliability",
    "construct_scores",
    "describe_items",
    "detect_design",
    "idial_summary",
    "item_tables",
    "rater_agreement",
    "ratings_by_turn",
    "wilson_interval",
]

ALL_SYSTEMS = "(all systems)"
"""The group of every answer together, beside each system's own row."""
IDIAL_ASPECTS = {
    "task_completion": "Task completion",
    "effectiveness": "Effectiveness of the dialogue",
    "user_satisfaction": "User satisfaction",
}
_NOT_SYSTEMS = (NO_SYSTEM, SEVERAL_SYSTEMS)
_ITEM_KEYS = ["questionnaire_id", "item_id"]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's (1927) score interval for a proportion: unlike the Wald interval it stays
    inside [0, 1] and keeps its coverage with few sessions or rates near 0 or 1."""
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n}")
    z = float(norm.ppf(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # Exactly, the interval holds p (and reaches 0 or 1 at none or all); in floating point
    # centre ± half can miss it by an ulp, which would draw a negative error bar.
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


_DESCRIBED = ["type", "reverse", "construct", "status", "value", "text", "min", "max", "label"]
"""The columns answer tables read: a filter copies only these, not all of a million rows'."""


def answered_closed(responses: pd.DataFrame, by: Sequence[str] = ("system_id",)) -> pd.DataFrame:
    """Answers to closed items, with the columns answer tables read: filter once and pass
    the result to ``item_tables`` (for any ``by`` within the one given), which then uses
    it as it is. Rankings are not among them: their options' ranks have tables of their
    own (``analytics.statistics.ranking``)."""
    answered = (responses["status"] == AnswerStatus.ANSWERED.value) & ~responses["type"].isin(
        ["text", *ORDER_TYPES]
    )
    columns = [*by, *_ITEM_KEYS, *_DESCRIBED]
    return responses[columns] if answered.all() else responses.loc[answered, columns]


def answer_distribution(
    responses: pd.DataFrame,
    by: Sequence[str] = ("system_id",),
    choices: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """How often each answer was given, per group and item, with every point of a scale
    (zero counts included, so that stacked bars line up across systems). A multiple-choice
    item counts each ticked option: its shares are of the participants who answered."""
    return item_tables(responses, by, choices)[1]


def describe_items(
    responses: pd.DataFrame,
    by: Sequence[str] = ("system_id",),
    choices: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per group and item: n, mean, SD, median, quartiles and IQR of the answers as given
    (reverse items are not recoded here: a reader compares them with the wording), and the
    distribution as ``{answer: count}``. Choice items get n and the distribution only."""
    return item_tables(responses, by, choices)[0]


def item_tables(
    responses: pd.DataFrame,
    by: Sequence[str] = ("system_id",),
    choices: pd.DataFrame | None = None,
    labels: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``describe_items`` and ``answer_distribution`` of the same groups from one grouping.
    ``labels`` (``answer_labels``, which no grouping changes) can be passed to reuse them."""
    groups = _ItemGroups.of(responses, by)
    labels = answer_labels(responses, choices) if labels is None else labels  # keyed or not
    distribution = _distribution(groups, labels)
    return _described(groups, distribution), distribution


def answer_labels(responses: pd.DataFrame, choices: pd.DataFrame | None = None) -> pd.DataFrame:
    """The wording of each answer of each item: the codebook's (``choices``) first, else
    the first an answer carried."""
    answered = answered_closed(responses, ())
    keys = [*_ITEM_KEYS, "value"]
    numbers, group, labels = _numbered(answered[[*keys, "label"]], keys)
    labels["label"] = numbers.groupby(_grouper(group), observed=False)["label"].first().array
    labels["answer"] = [int(v) if float(v).is_integer() else v for v in labels["value"]]
    labels = labels.drop(columns="value")
    if choices is not None and len(choices):
        options = choices.rename(columns={"value": "answer"})[[*_ITEM_KEYS, "answer", "label"]]
        labels = pd.concat([options, labels.astype(object)])
    return labels.astype(object).drop_duplicates([*_ITEM_KEYS, "answer"])


@dataclass(frozen=True)
class _ItemGroups:
    """Closed answers grouped by ``keys`` (the groups, then the item) once, with each
    group's keys and item attributes: item tables and distributions share the one grouping.
    Groups are numbered in ``groupby(keys)`` order (``group``, one per answer) and grouped
    by that one integer: grouping a million answers by several categoricals cost more than
    the statistics, for every statistic again."""

    answered: pd.DataFrame
    keys: list[str]
    group: np.ndarray
    grouped: DataFrameGroupBy
    item: pd.DataFrame
    """Per group, by number: its keys, the item's type, reverse, construct, min and max."""
    numbers: pd.DataFrame
    """How often each number was the answer in each group (``_value_counts``)."""

    @classmethod
    def of(cls, responses: pd.DataFrame, by: Sequence[str]) -> _ItemGroups:
        keys = [*by, *_ITEM_KEYS]
        answered, group, named = _numbered(answered_closed(responses, by), keys)
        grouped = answered.groupby(_grouper(group), observed=False)
        item = grouped[["type", "reverse", "construct", "min", "max"]].first()
        item = pd.concat([named.set_axis(item.index), item], axis=1)
        value = answered["value"].to_numpy()
        given = ~np.isnan(value)
        return cls(answered, keys, group, grouped, item, _value_counts(group[given], value[given]))

    def with_keys(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame``'s column ``group`` replaced by the group's keys (as objects)."""
        named = self.item[self.keys].astype(object).iloc[frame["group"]]
        return pd.concat(
            [named.reset_index(drop=True), frame.drop(columns="group").reset_index(drop=True)],
            axis=1,
        )


def _value_counts(group: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    """How often each value occurs in each group, as ``groupby([group, value]).size()``
    (groups and values ascending, no zero counts): one ``bincount`` of combined codes."""
    codes, uniques = pd.factorize(values, sort=True)
    combined = group.astype(np.int64) * len(uniques) + codes
    counts = np.bincount(combined, minlength=(int(group.max(initial=-1)) + 1) * len(uniques))
    seen = np.flatnonzero(counts)
    return pd.DataFrame(
        {"group": seen // len(uniques), "answer": uniques[seen % len(uniques)]}
    ).assign(count=counts[seen])


class _Ranked:
    """Each group's numbers in order, as their counts (``_value_counts``, ascending) give
    them: medians and quantiles step for step as pandas' groupby ``median`` and
    ``quantile`` (linear) compute them from the sorted numbers, without sorting a million
    answers into their groups for each."""

    def __init__(self, counts: pd.DataFrame, groups: int) -> None:
        self.answer = counts["answer"].to_numpy(dtype=float)
        self.ends = np.cumsum(counts["count"].to_numpy())  # past each number's last place
        self.n = np.bincount(counts["group"], counts["count"], groups).astype(np.int64)
        self.start = np.cumsum(self.n) - self.n  # each group's first place

    def kth(self, k: np.ndarray) -> np.ndarray:
        """The k-th smallest number of each group (0 the smallest; NaN without numbers)."""
        if not len(self.answer):
            return np.full(len(self.n), np.nan)
        place = self.start + np.clip(k, 0, np.maximum(self.n - 1, 0))
        row = np.minimum(np.searchsorted(self.ends, place, side="right"), len(self.answer) - 1)
        return np.where(self.n > 0, self.answer[row], np.nan)

    def median(self) -> np.ndarray:
        half = self.n // 2
        upper = self.kth(half)
        return np.where(self.n % 2 == 1, upper, (upper + self.kth(half - 1)) / 2)

    def quantile(self, q: float) -> np.ndarray:
        place = q * (self.n - 1)
        lower = place.astype(np.int64)  # truncated, as pandas does
        below, fraction = self.kth(lower), place % 1
        return np.where(fraction == 0, below, below + (self.kth(lower + 1) - below) * fraction)


def _distribution(groups: _ItemGroups, labels: pd.DataFrame) -> pd.DataFrame:
    answered, keys = groups.answered, groups.keys
    counted = groups.with_keys(groups.numbers)
    codes = answered[answered["value"].isna() & answered["text"].notna()]
    multi = codes["type"] == "multi_choice"
    ticked = codes[multi].assign(text=codes.loc[multi, "text"].astype(str).str.split(","))
    codes = pd.concat([codes[~multi], ticked.explode("text")], ignore_index=True)
    coded = (
        codes.groupby([*keys, "text"], observed=True)
        .size()
        .rename("count")
        .reset_index()
        .rename(columns={"text": "answer"})
    )
    # Scale points nobody chose, so that every group shows the whole scale.
    item = groups.item.set_index(keys)
    spans = item.loc[item["type"].isin(POINT_TYPES), ["min", "max"]].dropna().reset_index()
    spans["answer"] = pd.Series(
        [np.arange(a, b + 1.0) for a, b in zip(spans["min"], spans["max"], strict=True)],
        index=spans.index,
        dtype=object,
    )
    points = spans.drop(columns=["min", "max"]).explode("answer")
    points["answer"] = points["answer"].astype(float)
    if len(points):
        counted = points.astype({k: object for k in keys}).merge(counted, how="outer")
    counted["answer"] = [int(v) if float(v).is_integer() else v for v in counted["answer"]]
    counts = pd.concat([counted, coded.astype({k: object for k in keys})], ignore_index=True)
    sizes = pd.DataFrame({"group": groups.item.index, "n": groups.grouped.size()})
    totals = groups.with_keys(sizes)
    counts = counts.merge(totals, on=keys, how="left")
    counts["count"] = counts["count"].fillna(0).astype(int)
    counts["share"] = counts["count"] / counts["n"]
    counts = counts.merge(labels, on=[*_ITEM_KEYS, "answer"], how="left")
    counts = counts.sort_values([*keys, "answer"], key=_sort_key, kind="stable")
    return counts[[*keys, "answer", "label", "count", "n", "share"]].reset_index(drop=True)


def _sort_key(column: pd.Series) -> pd.Series:
    return column.map(lambda v: (0, v, "") if isinstance(v, int | float) else (1, 0, str(v)))


def _described(groups: _ItemGroups, distribution: pd.DataFrame) -> pd.DataFrame:
    keys, item = groups.keys, groups.item
    table = item[[*keys, "type", "reverse", "construct"]].assign(n=groups.grouped.size())
    # Every group's numbers, kept where the item is numeric (or unknown): one grouping.
    values = groups.grouped["value"]
    ranked = _Ranked(groups.numbers, len(item))
    stats = pd.DataFrame(
        {
            "mean": values.mean(),
            "sd": values.std(),
            "median": ranked.median(),
            "q1": ranked.quantile(0.25),
            "q3": ranked.quantile(0.75),
        }
    )
    stats = stats[item["type"].isin(NUMERIC_TYPES) | item["type"].isna()]
    stats["iqr"] = stats["q3"] - stats["q1"]
    table = table.join(stats).reset_index(drop=True)
    counts: dict[tuple[object, ...], dict[object, int]] = {}
    columns = [distribution[k] for k in [*keys, "answer", "count"]]
    for *key, answer, count in zip(*columns, strict=True):  # a group's rows are together
        counts.setdefault(tuple(key), {})[answer] = int(count)
    table["distribution"] = pd.Series(
        [counts.get(tuple(row), {}) for row in table[keys].itertuples(index=False)],
        index=table.index,
        dtype=object,
    )
    for name in ("type", "construct"):
        table[name] = table[name].astype(object)
    return table


def construct_scores(responses: pd.DataFrame) -> pd.DataFrame:
    """One score per participant and answer set (a session, one of its turns, the study)
    and construct: the mean of the construct's answered items, reverse items recoded.
    ``n_items`` says how many items it rests on, ``k_items`` how many the construct has."""
    keys = ["participant_id", "scope", "questionnaire_id", "construct"]
    kept = [*keys, "score", "item_id", "system_id", "scenario_id", "session_id", "moment", "turn"]
    scored = responses.loc[responses["construct"].notna() & responses["score"].notna(), kept]
    scored = scored.assign(k_items=_items_in_construct(scored))
    number = _factorize_runs(group_key(scored, keys))[0]  # as first seen
    first = np.flatnonzero(np.diff(np.maximum.accumulate(number), prepend=-1))  # a set's first
    sets = scored.groupby(_grouper(number), observed=False)
    parts = [  # one pass for the answer set's own columns, not one per column
        scored[keys].iloc[first],  # the same in all its rows
        sets["score"].agg(["mean", "size"]).set_axis(["score", "n_items"], axis=1),
        sets[["system_id", "scenario_id", "session_id", "moment", "turn", "k_items"]].first(),
    ]
    scores = pd.concat([part.reset_index(drop=True) for part in parts], axis=1)
    names = ("participant_id", "questionnaire_id", "construct", "system_id", "scenario_id")
    return scores.astype(dict.fromkeys(names, object))


def _items_in_construct(scored: pd.DataFrame) -> pd.Series:
    """For each answer, how many distinct items its questionnaire's construct has among
    ``scored`` (none without a questionnaire): from a measure × item table of the few
    measures and items, not from a grouping of every answer."""
    measure = _factorize_runs(group_key(scored, ("questionnaire_id", "construct")))[0]
    item = pd.Categorical(scored["item_id"]).codes
    named = item >= 0
    seen = np.zeros((int(measure.max(initial=-1)) + 1, int(item.max(initial=-1)) + 1), bool)
    seen[measure[named], item[named]] = True
    k_items = pd.Series(seen.sum(axis=1)[measure], index=scored.index)
    return k_items.where(scored["questionnaire_id"].notna())


def _factorize_runs(key: np.ndarray, *, sort: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(key, sort=sort)``, one key per run of equal keys: the answers of a set
    are stored together, so a million answers are a few runs per set (and scattered
    answers cost what factorizing them all does). Sorted, the runs' keys are ranked by a
    stable sort, which keys stored in about their order make cheaper than hashing them."""
    if not len(key):
        return np.zeros(0, dtype=np.intp), key
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    runs = key[starts]
    if sort:
        order = np.argsort(runs, kind="stable")
        ranked = runs[order]
        first = np.concatenate([[True], ranked[1:] != ranked[:-1]])
        codes = np.empty(len(runs), dtype=np.intp)
        codes[order] = np.cumsum(first) - 1
        uniques = ranked[first]
    else:
        codes, uniques = pd.factorize(runs)
    return np.repeat(codes, np.diff(np.append(starts, len(key)))), uniques


def _numbered(
    frame: pd.DataFrame, keys: Sequence[str]
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """``frame`` without the rows missing a key (as ``groupby`` leaves them out), each row's
    group number, groups numbered in ``groupby(keys)`` order, and each group's keys: group
    by ``_grouper`` of the numbers rather than by several columns again for every
    statistic, and read the keys from the numbers rather than from a million rows."""
    keyed = frame[keys].notna().all(axis=1)
    frame = frame if keyed.all() else frame[keyed]
    levels = [pd.Categorical(frame[name]) for name in keys]
    combined = np.zeros(len(frame), dtype=np.int64)
    for level in levels:
        combined = combined * len(level.categories) + level.codes
    number, combinations = pd.factorize(combined, sort=True)
    named = {}
    for name, level in reversed(list(zip(keys, levels, strict=True))):
        combinations, code = np.divmod(combinations, len(level.categories))
        value = pd.Series(pd.Categorical.from_codes(code, dtype=level.dtype))
        named[name] = value.astype(frame[name].dtype)
    return frame, number, pd.DataFrame({name: named[name] for name in keys})


def _grouper(codes: np.ndarray) -> pd.CategoricalIndex:
    """Group numbers 0…n−1 as categories: grouping by them (``observed=False``) takes the
    numbers as they are, where grouping by the integers hashes them all again."""
    groups = pd.RangeIndex(int(codes.max(initial=-1)) + 1)
    return pd.CategoricalIndex(pd.Categorical.from_codes(codes, categories=groups))


def construct_reliability(
    responses: pd.DataFrame,
    by: str = "system_id",
    *,
    min_cases: int = 5,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Cronbach's alpha of every construct, per system and for all answers together, with
    its interval (Feldt's F-based interval as pingouin computes it, rounded there to 3 dp).

    Only complete answer sets count (listwise): an alpha from pairwise covariances can
    exceed what any participant's answers support. Items that never vary are left out and
    named in ``dropped``, as R's ``psych::alpha`` does (they add nothing to the total's
    variance but would count in k). Where alpha cannot be computed the row says why in
    ``note``; ``warning`` says when a number stands on too few items to lean on.
    """
    kept = ["questionnaire_id", "construct", "participant_id", "scope", by, "item_id", "score"]
    rows: list[dict[str, object]] = []
    for part in _by_construct(responses, kept):
        q_id, construct = part["questionnaire_id"].iloc[0], part["construct"].iloc[0]
        wide, system, named = _answer_sets(part, by)
        present = sorted(np.unique(system), key=lambda code: named[code])
        groups = [(named[code], wide[system == code]) for code in present]
        for group, frame in [*groups, (ALL_SYSTEMS, wide)]:
            if group in _NOT_SYSTEMS:
                continue
            rows.append(
                {
                    "questionnaire_id": q_id,
                    "construct": construct,
                    by: group,
                    **_alpha(frame, min_cases, confidence),
                }
            )
    columns = ["questionnaire_id", "construct", by, "k_items", "n_cases", "n_incomplete"]
    columns += ["alpha", "ci_low", "ci_high", "dropped", "note", "warning"]
    return pd.DataFrame(rows, columns=columns)


def _by_construct(responses: pd.DataFrame, columns: list[str]) -> Iterator[pd.DataFrame]:
    """The scored answers of each construct, in ``groupby(["questionnaire_id", "construct"])``
    order, rows in their order, only ``columns``: one construct's rows copied at a time
    rather than every scored answer, and again sorted, as a groupby's parts are."""
    usable = (
        responses["construct"].notna()
        & responses["score"].notna()
        & responses["questionnaire_id"].notna()
    ).to_numpy()
    measure = pd.factorize(
        group_key(responses, ("questionnaire_id", "construct"))[usable], sort=True
    )[0]
    rows = np.flatnonzero(usable)
    kept = responses[columns]  # the same columns, not copied (copy on write)
    for number in range(int(measure.max(initial=-1)) + 1):  # a few constructs: no sorting
        yield kept.iloc[rows[measure == number]]


def _answer_sets(part: pd.DataFrame, by: str) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """One row per answer set (participant, scope, ``by``) in the order of their keys, one
    column per item (sorted), NaN where an item has no score; each row's ``by`` as a code
    and the names of the codes (``named[code]``, None for −1). Built from category codes:
    reshaping a million answers never makes a million keys, nor splitting them by name."""
    row, keys = _factorize_runs(group_key(part, ("participant_id", "scope", by)), sort=True)
    groups = pd.Categorical(part[by]).categories
    named = np.asarray([*groups, None], dtype=object)  # code −1 (no value): the last
    group = keys % (len(groups) + 1) - 1
    items = pd.Categorical(part["item_id"])
    present = np.flatnonzero(np.bincount(items.codes, minlength=len(items.categories)))
    names = np.asarray(items.categories, dtype=object)[present]
    order = np.argsort(names, kind="stable")
    column = np.empty(len(items.categories), dtype=np.int64)
    column[present[order]] = np.arange(len(present))
    values = np.full((len(present), len(keys)), np.nan)  # items × sets, as unstack lays it out
    values[column[items.codes], row] = part["score"].to_numpy(dtype=float)
    return pd.DataFrame(values.T, columns=pd.Index(names[order], dtype=object)), group, named


FEW_ITEMS = 3
"""Below this many items alpha gets a warning: with two items it is a lower bound that
swings with the one correlation it rests on (Eisinga, te Grotenhuis & Pelzer 2013 advise
the Spearman–Brown coefficient for two-item scales)."""


def _alpha(wide: pd.DataFrame, min_cases: int, confidence: float) -> dict[str, object]:
    complete = wide.dropna()
    result: dict[str, object] = {
        "k_items": wide.shape[1],
        "n_cases": len(complete),
        "n_incomplete": len(wide) - len(complete),
        "alpha": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "dropped": None,
        "note": None,
        "warning": None,
    }
    if wide.shape[1] < 2:
        result["note"] = "one item only: alpha needs at least two"
        return result
    if len(complete) < max(min_cases, 3):
        result["note"] = f"{len(complete)} complete answer sets (at least {min_cases} needed)"
        return result
    values = complete.to_numpy()
    same = (values == values[:1]).all(axis=0)  # each column's one value, unless it varies
    constant = [str(c) for c, never in zip(complete.columns, same, strict=True) if never]
    if constant:
        complete = complete.drop(columns=constant)
        result["dropped"] = ", ".join(constant)
        result["k_items"] = complete.shape[1]
    if complete.shape[1] < 2:
        result["note"] = (
            f"{len(constant)} of {wide.shape[1]} items never vary ({', '.join(constant)}): "
            "alpha needs two items that do"
        )
    elif complete.sum(axis=1).var() == 0:
        result["note"] = "every answer set has the same total: alpha is undefined"
    else:
        alpha, ci = cronbach_alpha(complete, confidence)
        result.update(alpha=float(alpha), ci_low=float(ci[0]), ci_high=float(ci[1]))
        if complete.shape[1] < FEW_ITEMS:
            result["warning"] = (
                "two items only: alpha is a lower bound resting on one correlation "
                "(Spearman–Brown suits two items better)"
            )
    return result


def cronbach_alpha(wide: pd.DataFrame, confidence: float = 0.95) -> tuple[float, np.ndarray]:
    """Cronbach's alpha of a participant × item table without gaps and its interval by
    the F distribution (Feldt), the interval rounded to 3 decimals: as
    ``pingouin.cronbach_alpha`` computes them, step for step, without importing pingouin
    (its import took longer than a large report's tests)."""
    n, k = wide.shape
    covariance = wide.cov(numeric_only=True)
    alpha = (k / (k - 1)) * (1 - np.trace(covariance) / covariance.sum().sum())
    tail = 1 - confidence
    df1 = n - 1
    df2 = df1 * (k - 1)
    lower = 1 - (1 - alpha) * f_distribution.isf(tail / 2, df1, df2)
    upper = 1 - (1 - alpha) * f_distribution.isf(1 - tail / 2, df1, df2)
    return float(alpha), np.round([lower, upper], 3)


def idial_summary(responses: pd.DataFrame, questionnaire_id: str = "idial") -> pd.DataFrame:
    """The IDIAL report's lines (Cutugno et al., EVALITA 2018, section 5): per system and
    aspect, the average of the aspect's statements over every answer, as "2.03/4".

    Reverse statements count recoded (IDIAL statement 4), so that higher is better for all.
    """
    part = responses.loc[
        (responses["questionnaire_id"] == questionnaire_id)
        & responses["construct"].notna()
        & responses["score"].notna()
        & ~responses["system_id"].isin(_NOT_SYSTEMS),
        ["system_id", "construct", "item_id", "max", "score", "participant_id"],
    ]
    columns = ["system_id", "aspect", "construct", "statements", "n_participants", "n_answers"]
    columns += ["mean", "sd", "scale_max", "summary"]
    rows = []
    for (system, construct), group in part.groupby(["system_id", "construct"], observed=True):
        numbers = sorted({_statement(str(i)) for i in group["item_id"].unique()}, key=_natural)
        scale_max = float(group["max"].max())
        mean = float(group["score"].mean())
        rows.append(
            {
                "system_id": system,
                "aspect": IDIAL_ASPECTS.get(str(construct), str(construct)),
                "construct": construct,
                "statements": ", ".join(numbers),
                "n_participants": group["participant_id"].nunique(),
                "n_answers": len(group),
                "mean": mean,
                "sd": float(group["score"].std()),
                "scale_max": scale_max,
                "summary": f"{mean:.2f}/{scale_max:g}",
            }
        )
    order = {c: i for i, c in enumerate(IDIAL_ASPECTS)}
    table = pd.DataFrame(rows, columns=columns)
    table = table.sort_values(["system_id", "construct"], key=_aspect_key(order), kind="stable")
    return table.astype({"system_id": object, "construct": object}).reset_index(drop=True)


def _aspect_key(order: dict[str, int]) -> Callable[[pd.Series], pd.Series]:
    """Sort key for ``sort_values``: constructs in ``order``, other columns as they are."""
    return lambda col: (
        col.map(lambda v: order.get(v, len(order))) if col.name == "construct" else col
    )


def _statement(item_id: str) -> str:
    match = re.search(r"(\d+)$", item_id)
    return match.group(1) if match else item_id


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (10**9, text)


def ratings_by_turn(
    responses: pd.DataFrame, level: str = "item", scores: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Exchange-level ratings by turn index, per system: where conversations degrade.

    ``level="item"`` gives each item; ``"construct"`` the construct scores of each turn
    (pass ``scores`` from ``construct_scores`` to reuse them). Scores are used (reverse
    items recoded), so higher is better on every line.
    """
    if level == "construct":  # a few thousand scores with object keys: grouped as they are
        scores = construct_scores(responses) if scores is None else scores
        scores = scores[scores["moment"] == Moment.EXCHANGE.value]
        keys, value = ["system_id", "questionnaire_id", "construct", "turn"], "score"
        frame = scores[~scores["system_id"].isin(_NOT_SYSTEMS)]
        table = frame.groupby(keys, observed=True)[value].agg(["size", "mean", "std"])
        table = table.reset_index()
    else:  # every exchange's answers: grouped by one number (``_numbered``)
        keys, value = ["system_id", "questionnaire_id", "item_id", "turn"], "score"
        chosen = (
            (responses["moment"] == Moment.EXCHANGE.value)
            & responses["score"].notna()
            & ~responses["system_id"].isin(_NOT_SYSTEMS)
        )
        frame, group, named = _numbered(responses.loc[chosen, [*keys, value]], keys)
        stats = frame.groupby(_grouper(group), observed=False)[value].agg(["size", "mean", "std"])
        table = pd.concat([named, stats.reset_index(drop=True)], axis=1)
    table = table.rename(columns={"size": "n", "std": "sd"})
    table["turn"] = table["turn"].astype(int)
    return table.astype({k: object for k in keys if k != "turn"})


def rater_agreement(responses: pd.DataFrame, *, min_raters: int = 2) -> pd.DataFrame:
    """Agreement between participants who rated the same material (rating tasks: each
    stimulus rated by several people), per item: Krippendorff's alpha (interval), which
    copes with missing ratings, and ICC(2,1) and ICC(2,k) with 95% intervals (HRI CUES
    reports both) when every rater rated every stimulus, as ``intraclass_corr`` needs
    complete ratings (with missing ones it would drop whole stimuli). A stimulus is keyed by
    system, scenario and its id (``_rated_target``): the same id under two systems is two.
    Annotators' ratings (``analytics.annotations.ratings``) get the full set of coefficients; both
    use ``analytics.annotations.agreement``."""
    from analytics.annotations import agreement

    rated = responses[(responses["moment"] == Moment.RATING.value) & responses["score"].notna()]
    rated = rated.assign(target=_rated_target(rated))
    rows = []
    for (q_id, item_id), part in rated.groupby(_ITEM_KEYS, observed=True):
        matrix = part.pivot_table(
            index="participant_id", columns="target", values="score", observed=True
        )
        row: dict[str, object] = {"questionnaire_id": q_id, "item_id": item_id}
        row |= {"n_raters": matrix.shape[0], "n_stimuli": matrix.shape[1]}
        row |= dict.fromkeys(["krippendorff_alpha", "icc2_1", "icc2_k"], math.nan)
        row |= dict.fromkeys([f"icc2_{k}_ci_{e}" for k in "1k" for e in ("low", "high")], math.nan)
        row["note"] = None
        data = matrix.to_numpy(dtype=float)
        if matrix.shape[0] < min_raters or matrix.shape[1] < 2:
            row["note"] = "fewer than two raters or stimuli"
        elif np.nanvar(data) == 0:
            row["note"] = "every rating is the same"
        else:
            values = sorted(set(data[~np.isnan(data)].tolist()))
            row["krippendorff_alpha"] = agreement.alpha(data, "interval", values)
            if not matrix.isna().any().any():
                forms = agreement.icc_forms(data)
                for name, form in (("icc2_1", "ICC2"), ("icc2_k", "ICC2k")):
                    if form in forms:
                        row[name] = forms[form]["value"]
                        row[f"{name}_ci_low"] = forms[form]["ci_low"]
                        row[f"{name}_ci_high"] = forms[form]["ci_high"]
        rows.append(row)
    columns = ["questionnaire_id", "item_id", "n_raters", "n_stimuli", "krippendorff_alpha"]
    columns += [f"icc2_{k}{s}" for k in ("1", "k") for s in ("", "_ci_low", "_ci_high")]
    return pd.DataFrame(rows, columns=[*columns, "note"])


def _rated_target(rated: pd.DataFrame) -> pd.Series:
    """What was rated: a stimulus of one system in one scenario. Rows with the same id in
    two systems or scenarios are different targets (pooling them counted six as three)."""
    parts = [
        rated[column].astype(object).where(rated[column].notna(), "").astype(str)
        for column in ("system_id", "scenario_id", "stimulus_id")
        if column in rated
    ]
    if not parts:
        return pd.Series([], index=rated.index, dtype=object)
    target = parts[0]
    for part in parts[1:]:
        target = target + "|" + part
    return target
