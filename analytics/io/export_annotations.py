"""The annotators' ratings in ``ozlab export``: every rating as given, and every target's
final (adjudicated) value per item as the report computes it (``--wide``: one row per target,
one column per item, with value labels for SPSS).

Only a study with annotation ratings has these files, as only such a study has the report's
annotation section: the export of a study without annotators is what it was before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.annotations.judge_flags import judge_flags
from analytics.annotations.ratings import final_values, instruments_for
from analytics.data.loading import StudyData, item_choices
from analytics.io.export import Column, Table, spss_label, spss_name, timed_columns, unique_name
from bot.core.vocabulary import FlagReason
from bot.engine.annotating.injection import ADDRESS_PATTERNS
from questionnaires.models import Questionnaire

_LEVEL = Column(
    "level",
    "string",
    "what one rating is about: exchange (one exchange of a conversation) or session (the "
    "whole conversation: HRI CUES' overall rating)",
    {"exchange": "one exchange", "session": "the whole conversation"},
)
ANNOTATION_KEYS = [
    Column("job", "string", "the annotation job (its file, or the job an import named)"),
    _LEVEL,
    Column(
        "target",
        "string",
        "what was rated, within its job and level: SESSION#TURN for an exchange, the session "
        "id for a conversation, or the id of material from outside the study (imported)",
    ),
    Column("session_id", "string", "the session rated (empty: material from outside the study)"),
    Column("turn", "integer", "the exchange rated: its place in the session, from 1"),
    Column("system_id", "string", "the system of the session rated, as sessions.system_id"),
    Column("scenario_id", "string", "the scenario of the session rated"),
]
_ITEM = [
    Column("instrument_id", "string", "the annotation instrument (its questionnaire file)"),
    Column("item_id", "string", "the item of the instrument, as its file names it"),
]
ANNOTATION_RATINGS = [
    *ANNOTATION_KEYS,
    Column("annotator", "string", "pseudonym of the annotator (never a participant's)"),
    *_ITEM,
    Column(
        "value",
        "string",
        "the rating as stored: the point of a scale, 0 to 100 for a slider, 1/0 for yes/no "
        "and thumbs, a choice's code, the words of a free-text item",
    ),
    Column("label", "string", "the wording of the answer chosen (empty: free text, or unknown)"),
    Column(
        "round",
        "string",
        "first (the annotators every target gets) or adjudication (a third annotator asked "
        "where the first differ, as the job's rule says)",
        {"first": "first round", "adjudication": "adjudication"},
    ),
    Column(
        "origin",
        "string",
        "telegram (rated in the bot) or import (ozlab import annotations)",
        {"telegram": "rated in Telegram", "import": "imported from a file"},
    ),
    *timed_columns("recorded_at", "when the rating was recorded"),
    Column(
        "flag_reason",
        "string",
        "addresses_judge: the words of the target rated address a model judge (matching one"
        f" of the patterns {', '.join(p.name for p in ADDRESS_PATTERNS)}: docs/judges.md),"
        " and the report leaves the judges' ratings of it out; empty: no flag. On every"
        " rating of the target, people's too: filter on it to leave it out",
        {FlagReason.ADDRESSES_JUDGE.value: FlagReason.ADDRESSES_JUDGE.meaning},
    ),
]
ANNOTATION_FINAL = [
    *ANNOTATION_KEYS,
    *_ITEM,
    Column(
        "value",
        "string",
        "the target's final value, as the report's adjudication rule gives it (empty: "
        "unresolved); closed items only (no free text, no multiple choice)",
    ),
    Column("label", "string", "the wording of the final value (empty: a median between points)"),
    Column(
        "score",
        "number",
        "scales and sliders (0 to 100): the final value as a number (a median may fall between)",
    ),
    Column("n_ratings", "integer", "ratings of the target's item, both rounds"),
    Column(
        "how",
        "string",
        "how the final value was reached: agreed, third annotator, majority, median or "
        "unresolved (the report's adjudication rule)",
    ),
]
_SCORED = ("scale", "slider")
"""Items whose final value is a number (a median may fall between two points)."""
_NUMERIC = ("yes_no", "thumbs")


@dataclass(frozen=True)
class _Answers:
    """What an item's answers are called, and how its wide column is typed."""

    kind: str
    meaning: str
    labels: dict[str, str]


def annotation_tables(data: StudyData, *, wide: bool = False) -> dict[str, Table]:
    """``annotation_ratings`` and ``annotation_final`` (and ``annotation_final_wide`` with
    ``wide``); nothing for a study without annotation ratings."""
    ratings = data.annotations
    if ratings.empty:
        return {}
    named = {str(i) for i in ratings["instrument_id"].dropna().unique()}
    answers = _answers(instruments_for(named, data))
    final = final_values(data).rename(columns={"item": "item_id"})
    found = {
        "annotation_ratings": Table(
            _ratings(ratings, answers, judge_flags(data)), ANNOTATION_RATINGS
        ),
        "annotation_final": Table(_final(final, answers), ANNOTATION_FINAL),
    }
    if wide:
        found["annotation_final_wide"] = _wide(final, answers)
    return found


def _answers(instruments: Iterable[Questionnaire]) -> dict[tuple[str, str], _Answers]:
    """Per (instrument, item): its type, wording and answers' labels, by stored value."""
    found = {}
    for instrument in instruments:
        for item in instrument.model_dump(by_alias=True)["items"]:
            labels = {str(v): str(label) for v, label in item_choices(item)}
            meaning = f"{instrument.id} / {item['id']}: {item.get('text', '')}"
            found[(instrument.id, str(item["id"]))] = _Answers(item["type"], meaning, labels)
    return found


def _label(answers: dict[tuple[str, str], _Answers], frame: pd.DataFrame) -> pd.Series:
    """The wording of each stored value, by its item's answers (None: free text, unknown)."""
    pairs = zip(frame["instrument_id"], frame["item_id"], frame["value"], strict=True)
    found = [
        None
        if value is None or (i, t) not in answers
        else answers[(i, t)].labels.get(str(value).strip())
        for i, t, value in pairs
    ]
    return pd.Series(found, index=frame.index, dtype=object)


def _ratings(
    ratings: pd.DataFrame, answers: dict[tuple[str, str], _Answers], flags: pd.DataFrame
) -> pd.DataFrame:
    frame = ratings.rename(columns={"system": "system_id", "scenario": "scenario_id"})
    recorded = pd.to_datetime(frame["recorded_at"], utc=True, format="ISO8601")
    why = {
        (str(job), str(level), str(target)): str(reason)
        for job, level, target, reason in zip(
            flags["job"], flags["level"], flags["target"], flags["flag_reason"], strict=True
        )
    }
    keys = zip(
        frame["job"].astype(str), frame["level"].astype(str), frame["target"].astype(str),
        strict=True,
    )  # fmt: skip
    return frame.assign(
        label=_label(answers, frame),
        recorded_at=(recorded - pd.Timestamp(0, tz="UTC")).dt.total_seconds(),
        recorded_at_iso=recorded.dt.floor("s"),
        flag_reason=pd.Series([why.get(key) for key in keys], index=frame.index, dtype=object),
    )


def _final(final: pd.DataFrame, answers: dict[tuple[str, str], _Answers]) -> pd.DataFrame:
    return final.rename(columns={"system": "system_id", "scenario": "scenario_id"}).assign(
        label=_label(answers, final)
    )


def _wide(final: pd.DataFrame, answers: dict[tuple[str, str], _Answers]) -> Table:
    """One row per target (job, level, target), one column per item with its final value."""
    keys = [c.name for c in ANNOTATION_KEYS]
    frame = final.rename(columns={"system": "system_id", "scenario": "scenario_id"})
    rows = frame[keys].drop_duplicates(["job", "level", "target"]).reset_index(drop=True)
    index = pd.MultiIndex.from_frame(rows[["job", "level", "target"]].astype(str))
    columns = list(ANNOTATION_KEYS)
    taken = {name.lower() for name in keys}
    cells: dict[str, np.ndarray] = {}
    for (instrument, item), part in frame.groupby(["instrument_id", "item_id"], sort=False):
        known = answers.get((str(instrument), str(item)))
        name = unique_name(spss_name(str(item)), taken)
        values = part.set_index(["job", "level", "target"])
        values.index = values.index.map(lambda key: tuple(map(str, key)))
        meaning = known.meaning if known else f"{instrument} / {item}: (no definition found)"
        meaning += " (final value)"
        if known is not None and known.kind in _SCORED:
            labels = {int(v): spss_label(label, 120) for v, label in known.labels.items()}
            cells[name] = values["score"].reindex(index).to_numpy()
            if known.kind == "slider":
                meaning += ", 0 to 100"
            columns.append(Column(name, "number", meaning, labels or None))
        elif known is not None and known.kind in _NUMERIC:
            labels = {int(v): spss_label(label, 120) for v, label in known.labels.items()}
            numbers = pd.to_numeric(values["value"], errors="coerce")
            cells[name] = numbers.reindex(index).to_numpy()
            columns.append(Column(name, "integer", meaning, labels))
        else:
            codes = (
                {v: spss_label(label, 120) for v, label in known.labels.items()} if known else {}
            )
            cells[name] = values["value"].reindex(index).to_numpy()
            columns.append(Column(name, "string", meaning, codes or None))
    return Table(pd.concat([rows, pd.DataFrame(cells)], axis=1), columns)
