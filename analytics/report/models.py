"""The models section's numbers: task success across systems when participants did several
tasks (GEE), and a mixed model of each score participants gave several times.

The section exists only where the data call for it: some participant contributed several
sessions, or gave a score more than once. Otherwise the report's tests over participants
stand alone and there is no section (the JSON's ``models`` tables are empty).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.data.grouping import group_key, sorted_groups
from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS, StudyData
from analytics.statistics import mixed
from analytics.statistics.clustered import TERM_COLUMNS, TEST_COLUMNS, compare_success
from analytics.statistics.completion import task_outcomes
from bot.core.vocabulary import AnswerStatus, Moment

KEYS = ["measure_kind", "questionnaire_id", "measure"]
CATEGORICAL = ("yes_no", "thumbs", "choice", "multi_choice", "text")
"""Item types that are not modelled as scores."""
ORDINAL = ("scale", "matrix")
"""Item types whose answers are ordered categories: a single such item gets the cumulative
link mixed model (a slider's numbers, and constructs' averages, the linear one)."""


@dataclass(frozen=True)
class ModelsSection:
    success_test: pd.DataFrame
    """One row (``clustered.TEST_COLUMNS``), or none when each participant did one task."""
    success_terms: pd.DataFrame
    """Each system's odds ratio of success against the first."""
    fits: pd.DataFrame
    """One row per measure modelled: ``KEYS``, ``mixed.FIT_COLUMNS``."""
    terms: pd.DataFrame
    """One row per measure and fixed effect: ``KEYS``, ``mixed.TERM_COLUMNS``."""


def empty_section() -> ModelsSection:
    """The section's tables with nothing in them."""
    return ModelsSection(
        success_test=pd.DataFrame(columns=TEST_COLUMNS),
        success_terms=pd.DataFrame(columns=TERM_COLUMNS),
        fits=pd.DataFrame(columns=[*KEYS, *mixed.FIT_COLUMNS]),
        terms=pd.DataFrame(columns=[*KEYS, *mixed.TERM_COLUMNS]),
    )


def models_section(
    data: StudyData, scores: pd.DataFrame, *, every_size: bool = False
) -> ModelsSection | None:
    """The section, or None when no participant did several tasks or gave a score twice;
    a measure with more scores than ``mixed.LARGEST_FITTED`` is fitted only ``every_size``."""
    outcomes = task_outcomes(data.sessions)
    outcomes = outcomes[~outcomes["system_id"].isin(_PSEUDO) & outcomes["system_id"].notna()]
    test, odds = compare_success(outcomes)
    fits, terms = [], []
    for keys, part in _measures(data, scores):
        if part["system_id"].nunique() < 2 or not mixed.repeated(part):
            continue
        ordinal = keys[0] == "item" and bool(part["type"].isin(ORDINAL).all())
        largest = None if every_size else mixed.LARGEST_FITTED
        found = mixed.mixed_model(part, largest=largest, ordinal=ordinal)
        fits.append({**dict(zip(KEYS, keys, strict=True)), **found.fit})
        terms.append(found.terms.assign(**dict(zip(KEYS, keys, strict=True))))
    if test.empty and not fits:
        return None
    term_table = (
        pd.concat(terms, ignore_index=True)[[*KEYS, *mixed.TERM_COLUMNS]]
        if terms
        else pd.DataFrame(columns=[*KEYS, *mixed.TERM_COLUMNS])
    )
    return ModelsSection(
        success_test=test,
        success_terms=odds,
        fits=pd.DataFrame(fits, columns=[*KEYS, *mixed.FIT_COLUMNS]),
        terms=term_table,
    )


_PSEUDO = (NO_SYSTEM, SEVERAL_SYSTEMS)


Measure = tuple[tuple[str, str, str], pd.DataFrame]


def _measures(data: StudyData, scores: pd.DataFrame) -> list[Measure]:
    """Each construct's scores and each single scale item's answers, one row per answer set
    with its time: what the comparison of systems tests, given after a task or the study."""
    responses = data.responses
    moments = (Moment.POST_TASK.value, Moment.POST_STUDY.value)
    out: list[Measure] = []
    kept = scores[scores["moment"].isin(moments)]
    kept = kept[~kept["system_id"].isin(_PSEUDO) & kept["system_id"].notna()]
    kept = kept.assign(answered_at=_first_answered(responses, kept))
    kept = kept.astype({"participant_id": object}).reset_index(drop=True)
    for (q_id, construct), part in kept.groupby(["questionnaire_id", "construct"], observed=True):
        out.append((("construct", str(q_id), str(construct)), part))
    checks = set(data.items.loc[data.items["attention"].notna(), "item_id"])
    # the answers outside every construct first: a few of a large study's million
    alone = responses[responses["construct"].isna() & responses["score"].notna()]
    single = alone[
        (alone["status"] == AnswerStatus.ANSWERED.value)
        & alone["moment"].isin(moments)
        & ~alone["item_id"].isin(checks)
        & ~alone["type"].isin(CATEGORICAL)
        & alone["system_id"].notna()
        & ~alone["system_id"].isin(_PSEUDO)
    ]
    for (q_id, item_id), part in single.groupby(["questionnaire_id", "item_id"], observed=True):
        out.append((("item", str(q_id), str(item_id)), part))
    return out


def _first_answered(responses: pd.DataFrame, sets: pd.DataFrame) -> np.ndarray:
    """When each of ``sets``' rows (a participant's answer set: participant and scope)
    got its first answer in ``responses``; NaN for a set without answers there.

    Found by the keys' category codes, ``sorted_groups`` and a binary search, rather than a
    ``groupby`` and a merge on the names: over a million answers those took most of the
    models section's time."""
    keys = ["participant_id", "scope"]
    codes = {key: pd.Categorical(responses[key]).categories for key in keys}
    answered = group_key(responses, keys)
    order, starts = sorted_groups(answered)
    found = np.full(len(sets), np.nan)
    if not len(starts):
        return found
    times = responses["answered_at"].to_numpy(dtype=float)[order]
    first = np.fmin.reduceat(times, starts)
    groups = answered[order][starts]
    wanted = group_key(
        pd.DataFrame({key: pd.Categorical(sets[key], categories=codes[key]) for key in keys}),
        keys,
    )
    at = np.minimum(np.searchsorted(groups, wanted), len(groups) - 1)
    hit = groups[at] == wanted
    found[hit] = first[at[hit]]
    return found
