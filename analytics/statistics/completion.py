"""Who took part, which tasks succeeded, how long they took, and who wrote the replies.

Tidy frames per system (and per scenario), from the ``sessions``, ``exchanges``,
``events`` and ``participants`` frames of ``analytics.data.loading``.

Task completion counts dialogue tasks whose outcome is known: closed sessions, and
abandoned ones, which count as not successful (a participant who gave up did not complete
the task). Sessions still in progress are left out and counted in ``in_progress``. Rating
tasks have no success and are left out.

Two kinds of success are kept apart when the sessions frame has a ``correct`` column: what
the system reported (``success``: it said the task was done) and whether the task was done
as the scenario's ``success_if`` defines (``correct``: True, False, or NaN when nothing
decided it). Each gets its rate over the sessions where it is known, with Wilson's interval
when each participant contributed one session and a GEE's clustered by participant when some
contributed several (``analytics.statistics.clustered``; ``ci_method`` says which). The rate
is always the estimate of the method that gave its interval: succeeded / sessions for
Wilson's, the GEE's fitted rate for a GEE (which weighs participants by the working
correlation, so it may differ a little from succeeded / sessions, counted beside it).

Where a sessions frame has ``success_measured`` (``analytics.statistics.success_sources``),
the success rate is over the tasks whose success some source decided (``success_n``): a
system no source speaks for has no rate, never 0 %.

Exchanges per task count real exchanges only (the system replied); failed ones (an error or
no reply in time) are counted apart, as they are not turns the participant experienced as
a dialogue.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from analytics.data.loading import StudyData
from analytics.statistics.clustered import success_rate
from bot.core.vocabulary import (
    AnswerStatus,
    Consent,
    EndReason,
    EventKind,
    ReplySource,
    SessionState,
)

SOURCES = tuple(source.value for source in ReplySource)
IN_PROGRESS = (SessionState.DIALOGUE.value, SessionState.QUESTIONNAIRE.value)
"""The states of a session not over yet."""


def participation(data: StudyData) -> dict[str, int]:
    """Study-wide counts: who arrived, agreed, declined, was screened out, finished."""
    participants, events, sessions = data.participants, data.events, data.sessions
    kinds = events["kind"].astype(object)
    consent = participants["consent"].astype(object)

    def people(kind: EventKind) -> int:
        return int(events.loc[kinds == kind.value, "participant_id"].nunique())

    return {
        "participants": len(participants),
        "consented": int((consent == Consent.ACCEPTED.value).sum()),
        "declined_consent": int((consent == Consent.DECLINED.value).sum()),
        "consent_pending": int((consent == Consent.PENDING.value).sum()),
        # Erased on withdrawal: only the store's anonymous count tells of them.
        "withdrawn": sum(count for _, system, count in data.withdrawals if not system),
        "not_eligible": people(EventKind.NOT_ELIGIBLE),
        "unreachable": people(EventKind.PARTICIPANT_UNREACHABLE),
        "with_sessions": int(sessions["participant_id"].nunique()),
        "completed_study": people(EventKind.STUDY_COMPLETED),
        "sessions": len(sessions),
        "completed_sessions": int((sessions["state"] == SessionState.ENDED.value).sum()),
        "abandoned_sessions": int((sessions["state"] == SessionState.ABANDONED.value).sum()),
        **_imported(data.responses),
    }


def _imported(responses: pd.DataFrame) -> dict[str, int]:
    """Answers that came from a file (``ozlab import responses``), not over Telegram."""
    if "imported" not in responses.columns:
        return {"imported_answers": 0, "imported_participants": 0}
    imported = responses[responses["imported"]]
    return {
        "imported_answers": len(imported),
        "imported_participants": int(imported["participant_id"].nunique()),
    }


def participation_by_system(
    sessions: pd.DataFrame, withdrawals: Sequence[tuple[str, str, int]] = ()
) -> pd.DataFrame:
    """Per system: participants, sessions, how the sessions stand, and (where the study
    counts them per system) how many withdrew."""
    state = sessions["state"].astype(object)
    frame = sessions.assign(
        completed=state == SessionState.ENDED.value,
        abandoned=state == SessionState.ABANDONED.value,
        in_progress=state.isin(IN_PROGRESS),
    )
    table = frame.groupby("system_id", observed=True).agg(
        participants=("participant_id", "nunique"),
        sessions=("session_id", "size"),
        completed=("completed", "sum"),
        abandoned=("abandoned", "sum"),
        in_progress=("in_progress", "sum"),
    )
    table = table.reset_index().astype({"system_id": object})
    by_system: dict[str, int] = {}
    for _, system, count in withdrawals:
        if system:
            by_system[system] = by_system.get(system, 0) + count
    table["withdrawn"] = [by_system.get(s, 0) for s in table["system_id"]]
    return table


def _dialogues(sessions: pd.DataFrame) -> pd.DataFrame:
    frame = sessions[sessions["scenario_kind"].astype(object) != "rating"]
    state = frame["state"].astype(object)
    known = frame["ended_at"].notna() | (state == SessionState.ABANDONED.value)
    correct = (
        pd.to_numeric(frame["correct"], errors="coerce").astype(float)
        if "correct" in frame.columns
        else pd.Series(np.nan, index=frame.index)
    )
    real = frame["n_exchanges"] - frame["n_failed_replies"]
    measured = (
        frame["success_measured"].astype(bool)
        if "success_measured" in frame.columns
        else pd.Series(True, index=frame.index)
    )
    return frame.assign(
        outcome_known=known,
        success_known=known & measured,
        succeeded=(frame["success"] == 1) & known & measured,
        correct_known=correct.notna() & known,
        done_correctly=(correct == 1) & known,
        real_exchanges=real,
    )


def task_outcomes(sessions: pd.DataFrame) -> pd.DataFrame:
    """Dialogue tasks whose success some source decided, one row each: participant,
    system, scenario and ``succeeded`` (0 or 1), for the models of success across systems."""
    frame = _dialogues(sessions)
    known = frame[frame["success_known"]]
    return pd.DataFrame(
        {
            "participant_id": known["participant_id"].astype(str),
            "system_id": known["system_id"].astype(object),
            "scenario_id": known["scenario_id"].astype(object),
            "succeeded": known["succeeded"].astype(int),
        }
    ).reset_index(drop=True)


def completion(
    sessions: pd.DataFrame, by: Sequence[str] = ("system_id",), confidence: float = 0.95
) -> pd.DataFrame:
    """Success rate with its interval (``ci_method``), exchanges per session (mean, SD, median) and
    time per task against the scenario's expected time, per group."""
    by = list(by)
    # only the columns used: each group would copy every other column of the sessions too
    used = dict.fromkeys([*by, "participant_id", *_OUTCOMES])
    frame = _dialogues(sessions)[list(used)]
    rows = []
    for key, group in frame.groupby(by, observed=True):
        key = key if isinstance(key, tuple) else (key,)
        done = group[group["outcome_known"]]
        timed = done[done["duration_s"].notna()]
        successes, n = int(done["succeeded"].sum()), len(done)
        measured = done[done["success_known"]]
        n_measured = len(measured)
        success = success_rate(measured, value="succeeded", confidence=confidence)
        judged = done[done["correct_known"]]
        correct, n_judged = int(judged["done_correctly"].sum()), len(judged)
        right = success_rate(judged, value="done_correctly", confidence=confidence)
        expected = timed["expected_duration_s"].dropna()
        over = timed.loc[expected.index]
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "sessions": len(group),
                "in_progress": len(group) - n,
                "n": n,
                "successes": successes,
                "success_n": n_measured,
                "success_rate": success.rate,
                "ci_low": success.low,
                "ci_high": success.high,
                "correct_n": n_judged,
                "correct": correct,
                "correct_rate": right.rate,
                "correct_ci_low": right.low,
                "correct_ci_high": right.high,
                "exchanges_mean": _stat(done["real_exchanges"], "mean"),
                "exchanges_sd": _stat(done["real_exchanges"], "std"),
                "exchanges_median": _stat(done["real_exchanges"], "median"),
                "failed_exchanges": int(done["n_failed_replies"].sum()),
                "duration_n": len(timed),
                "duration_mean_s": _stat(timed["duration_s"], "mean"),
                "duration_sd_s": _stat(timed["duration_s"], "std"),
                "duration_median_s": _stat(timed["duration_s"], "median"),
                "expected_duration_s": expected.median() if len(expected) else math.nan,
                "duration_vs_expected": _ratio(over["duration_s"], expected),
                "over_expected_share": (over["duration_s"] > expected).mean()
                if len(expected)
                else math.nan,
                "over_expected": int((over["duration_s"] > expected).sum()),
                "expected_n": len(expected),
                "ci_method": success.method,
                "correct_ci_method": right.method if n_judged else None,
            }
        )
    return pd.DataFrame(rows, columns=[*by, *_COMPLETION_COLUMNS])


_OUTCOMES = [
    "outcome_known", "success_known", "succeeded", "correct_known", "done_correctly",
    "real_exchanges", "n_failed_replies", "duration_s", "expected_duration_s",
]  # fmt: skip
"""The columns of ``_dialogues`` that ``completion`` reads."""

_COMPLETION_COLUMNS = [
    "sessions",
    "in_progress",
    "n",
    "successes",
    "success_n",
    "success_rate",
    "ci_low",
    "ci_high",
    "correct_n",
    "correct",
    "correct_rate",
    "correct_ci_low",
    "correct_ci_high",
    "exchanges_mean",
    "exchanges_sd",
    "exchanges_median",
    "failed_exchanges",
    "duration_n",
    "duration_mean_s",
    "duration_sd_s",
    "duration_median_s",
    "expected_duration_s",
    "duration_vs_expected",
    "over_expected_share",
    "over_expected",
    "expected_n",
    "ci_method",
    "correct_ci_method",
]


def _stat(values: pd.Series, how: str) -> float:
    values = values.dropna().astype(float)
    if how == "std" and len(values) < 2:
        return math.nan
    return float(getattr(values, how)()) if len(values) else math.nan


def _ratio(actual: pd.Series, expected: pd.Series) -> float:
    """Median of actual / expected time: 1.0 means tasks took as long as planned."""
    if not len(expected):
        return math.nan
    return float((actual / expected).median())


def end_reasons(sessions: pd.DataFrame, by: Sequence[str] = ("system_id",)) -> pd.DataFrame:
    """How sessions ended (success, exchange limit, time limit, participant done, wizard,
    abandoned, …), counted per group; sessions not ended yet are "(in progress)"."""
    by = list(by)
    reason = sessions["end_reason"].astype(object)
    reason = reason.where(
        reason.notna(),
        np.where(
            sessions["state"] == SessionState.ABANDONED.value,
            EndReason.ABANDONED.value,
            "(in progress)",
        ),
    )
    frame = sessions.assign(end_reason=reason)
    table = frame.groupby([*by, "end_reason"], observed=True).size().rename("count").reset_index()
    table["share"] = table["count"] / table.groupby(by, observed=True)["count"].transform("sum")
    return table.astype({k: object for k in by})


def wizard_share(exchanges: pd.DataFrame, has_source: bool) -> tuple[pd.DataFrame, str | None]:
    """Share of system turns sent as is, edited, or written by a wizard, per system. The
    second value is a note when there is nothing to say (no wizard data)."""
    columns = ["system_id", "source", "count", "share"]
    if not has_source:
        return pd.DataFrame(columns=columns), "no wizard data: this database does not record it"
    turns = exchanges.loc[exchanges["source"].notna(), ["system_id", "source"]]
    if turns.empty:
        return pd.DataFrame(columns=columns), "no wizard data: no system turn records its source"
    table = (
        turns.groupby(["system_id", "source"], observed=True).size().rename("count").reset_index()
    )
    table["share"] = table["count"] / table.groupby("system_id")["count"].transform("sum")
    if (table["source"].astype(object) == ReplySource.SYSTEM.value).all():
        note = "no wizard involvement: every system turn was sent as the system wrote it"
        return table[columns], note
    return table[columns].astype({"system_id": object, "source": object}), None


def comments(responses: pd.DataFrame, items: pd.DataFrame | None = None) -> pd.DataFrame:
    """Free-text answers, per system, in the order they were given, with the question they
    answer (``question``: the item's wording from ``items``, the codebook, when known)."""
    text = responses[
        (responses["type"] == "text")
        & (responses["status"] == AnswerStatus.ANSWERED.value)
        & responses["text"].notna()
    ]
    columns = ["system_id", "scenario_id", "participant_id", "session_id", "questionnaire_id"]
    columns += ["item_id", "question", "text", "answered_at"]
    table = text.sort_values(["system_id", "answered_at"], kind="stable")
    table = table.astype({c: object for c in columns[:6]})
    wording: dict[tuple[str, str], str] = {}
    if items is not None and len(items):
        wording = dict(
            zip(
                zip(items["questionnaire_id"], items["item_id"], strict=True),
                items["text"],
                strict=True,
            )
        )
    pairs = zip(table["questionnaire_id"], table["item_id"], strict=True)
    questions = [wording.get((q, i)) for q, i in pairs]
    table = table.assign(question=pd.Series(questions, index=table.index, dtype=object))
    return table[columns].reset_index(drop=True)


def events_by_kind(events: pd.DataFrame) -> pd.DataFrame:
    """How often each event happened, to how many participants and sessions."""
    table = events.groupby("kind", observed=True).agg(
        count=("kind", "size"),
        participants=("participant_id", "nunique"),
        sessions=("session_id", "nunique"),
    )
    return table.reset_index().astype({"kind": object})
