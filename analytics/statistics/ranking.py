"""Ranking items: each option's rank (1 = first), its mean per system with an interval, and
a rank test between systems per option.

A participant's answer to a ranking is one order of its options; what a reader compares is
where each option ends up. The unit is the participant, as for every other item: a
participant who ranked the options several times with one system (after each task) counts
once, with their mean rank of each option.

- Mean rank per option and system: the mean over participants, with Student's t interval
  on the logit of the mean's place between 1 and the number of options
  (``analytics.statistics.bounded``), so that it never leaves 1 to k, which a plain t
  interval of few participants does.
- Between systems, per option: the ranks are ordinal, so the test is a rank test chosen by
  the design as for rating items (``analytics.statistics.compare``): Mann–Whitney U
  between subjects and the Wilcoxon signed-rank test within (Kruskal–Wallis or Friedman
  for more systems). Ranks of few options are heavily tied, which both tests correct
  for. An item's options are one family: their headline p-values are Holm-corrected
  together (``p_family``), as an option's gain is another's loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from analytics.data.loading import ORDER_TYPES
from analytics.statistics.bounded import bounded_interval
from analytics.statistics.compare import COLUMNS as COMPARE_COLUMNS
from analytics.statistics.compare import compare_systems, family_holm
from bot.core.vocabulary import AnswerStatus

RANK_COLUMNS = [
    "participant_id", "session_id", "system_id", "questionnaire_id", "item_id", "option",
    "position", "label", "rank", "options",
]  # fmt: skip
"""One row per answered ranking and option: ``option`` is its stored code (as text),
``position`` its place among the buttons (from 0), ``rank`` its place in the participant's
order (1 = first), ``options`` how many the ranking has."""
MEAN_COLUMNS = [
    "questionnaire_id", "item_id", "option", "label", "system_id", "n", "mean", "sd",
    "ci_low", "ci_high", "first", "options",
]  # fmt: skip
"""Per item, option and system: participants (``n``), their mean rank with its interval,
and the share of them who put the option first (every time they ranked)."""
_KEYS = ["questionnaire_id", "item_id", "option"]


def option_ranks(responses: pd.DataFrame, choices: pd.DataFrame) -> pd.DataFrame:
    """Each answered ranking as one row per option with its rank. An answer that is not
    an order of the item's options (the study file changed since) is left out."""
    ranked = responses[
        responses["type"].isin(ORDER_TYPES)
        & (responses["status"] == AnswerStatus.ANSWERED.value)
        & responses["text"].notna()
    ]
    options = choices.astype({"questionnaire_id": object, "item_id": object})
    labels = {
        (q, i): {
            str(value): (position, str(label))
            for position, (value, label) in enumerate(
                zip(group["value"], group["label"], strict=True)
            )
        }
        for (q, i), group in options.groupby(["questionnaire_id", "item_id"], sort=False)
    }
    rows: list[tuple[object, ...]] = []
    for r in ranked.astype(object).to_dict("records"):
        named = labels.get((r["questionnaire_id"], r["item_id"]), {})
        codes = str(r["text"]).split(",")
        if sorted(codes) != sorted(named):
            continue
        for rank, code in enumerate(codes, start=1):
            rows.append(
                (r["participant_id"], r["session_id"], r["system_id"], r["questionnaire_id"],
                 r["item_id"], code, *named[code], rank, len(codes))
            )  # fmt: skip
    frame = pd.DataFrame(rows, columns=RANK_COLUMNS)
    if frame.empty:
        return frame
    # Options in the order offered, systems by name: the order the tables show.
    frame = frame.astype({"position": int, "rank": int, "options": int, "system_id": str})
    return frame.sort_values(["position", "system_id"], kind="stable").reset_index(drop=True)


def _per_participant(ranks: pd.DataFrame) -> pd.DataFrame:
    keys = [*_KEYS, "system_id", "participant_id"]
    return (
        ranks.groupby(keys, sort=False)
        .agg(rank=("rank", "mean"), label=("label", "first"), options=("options", "first"))
        .reset_index()
    )


def mean_ranks(ranks: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per item, option and system: the mean of participants' ranks (each participant's
    own mean first) with Student's t interval inside 1 to k (``bounded.METHOD``), in the
    order the options were offered."""
    if ranks.empty:
        return pd.DataFrame(columns=MEAN_COLUMNS)
    people = _per_participant(ranks)
    rows = []
    for (q_id, item_id, option, system), group in people.groupby([*_KEYS, "system_id"], sort=False):
        values = group["rank"].to_numpy(dtype=float)
        n = len(values)
        mean = float(values.mean())
        sd = float(values.std(ddof=1)) if n > 1 else math.nan
        half = (
            float(student_t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
            if n > 1
            else math.nan
        )
        low, high = bounded_interval(mean, half, (1.0, float(group["options"].iloc[0])))
        rows.append(
            {
                "questionnaire_id": q_id,
                "item_id": item_id,
                "option": option,
                "label": group["label"].iloc[0],
                "system_id": system,
                "n": n,
                "mean": mean,
                "sd": sd,
                "ci_low": low,
                "ci_high": high,
                "first": float(np.mean(values == 1)),
                "options": int(group["options"].iloc[0]),
            }
        )
    return pd.DataFrame(rows, columns=MEAN_COLUMNS)


def compare_ranks(
    ranks: pd.DataFrame,
    within: bool | None = None,
    min_n: int = 5,
    systems: Sequence[str] = (),
) -> pd.DataFrame:
    """Per item and option, the systems compared on participants' ranks of it (see the
    module docstring for the tests), in the order of ``systems``; ``p_family`` is Holm
    across the item's options."""
    columns = [*_KEYS, "label", *COMPARE_COLUMNS, "p_family"]
    if ranks.empty:
        return pd.DataFrame(columns=columns)
    people = _per_participant(ranks)
    tables = []
    for (q_id, item_id), item in people.groupby(["questionnaire_id", "item_id"], sort=False):
        per_option = []
        for option, group in item.groupby("option", sort=False):
            table = compare_systems(group, dv="rank", within=within, systems=systems, min_n=min_n)
            per_option.append(
                table.assign(
                    questionnaire_id=str(q_id),
                    item_id=str(item_id),
                    option=str(option),
                    label=group["label"].iloc[0],
                )
            )
        together = pd.concat(per_option, ignore_index=True)
        family_holm(together)
        tables.append(together)
    return pd.concat(tables, ignore_index=True)[columns]


@dataclass(frozen=True)
class Rankings:
    """The report's numbers about ranking items."""

    means: pd.DataFrame
    """``mean_ranks``: per item, option and system."""
    tests: pd.DataFrame
    """``compare_ranks``: per item and option, the systems compared."""
    texts: dict[tuple[str, str], str]
    """(questionnaire, item) → the item's wording."""


def rankings_from_study(
    responses: pd.DataFrame,
    items: pd.DataFrame,
    choices: pd.DataFrame,
    design: str,
    systems: Sequence[str] = (),
) -> Rankings | None:
    """The rankings' numbers, systems in the study's order; None (and no section) when no
    ranking was answered."""
    ranks = option_ranks(responses, choices)
    if ranks.empty:
        return None
    asked = items[items["type"].isin(ORDER_TYPES)].astype({"questionnaire_id": object})
    texts = {
        (str(q), str(i)): str(t)
        for q, i, t in zip(asked["questionnaire_id"], asked["item_id"], asked["text"], strict=True)
    }
    tests = compare_ranks(ranks, within=design == "within", systems=systems)
    return Rankings(mean_ranks(ranks), tests, texts)
