"""The pilot report (``ozlab report --pilot``): where a study loses or confuses people.

Read from the same snapshot as the report, for the simulated participants of ``ozlab demo``
and ``ozlab pilot`` and for a study's first real participants alike:

- drop-offs: who stopped before the end, in which phase, and the last thing the bot had
  asked them (the question left open, or the system's last reply);
- time per phase: the task and its questionnaires, against the scenario's expected time;
- items left unanswered (skipped, or where people stopped) or answered too fast to read;
- system errors and latency per system;
- hints: every message that got "please tap a button" (or another hint) instead of
  progress, as the bot recorded it (``hinted`` events), with what the participant sent,
  and the places that needed them, counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from analytics.data.loading import StudyData
from analytics.statistics.quality import reading_times
from bot.core.vocabulary import AnswerStatus, Consent, EventKind, Hint, SessionState

HINT_WORDS = {
    Hint.TAP_A_BUTTON.value: "typed instead of tapping a button",
    Hint.PICK_OPTIONS.value: "typed instead of ticking options",
    Hint.RANK_OPTIONS.value: "typed instead of tapping options in order",
    Hint.TEXT_TOO_LONG.value: "answer too long",
    Hint.QUESTION_PENDING.value: "/done while a question waited",
    Hint.TEXT_ONLY.value: "sent a sticker, photo or voice message",
    Hint.EDIT_IGNORED.value: "edited a message already sent",
    Hint.CONSENT_PENDING.value: "wrote instead of answering the agreement",
    Hint.UNKNOWN_COMMAND.value: "sent an unknown command",
}


@dataclass(frozen=True)
class PilotFindings:
    """The pilot report's tables, one row per finding."""

    participants: int
    simulated: int
    completed: int
    drop_offs: pd.DataFrame  # participant_id, phase, where, text
    phases: pd.DataFrame  # scenario_id, sessions, task_median_s, expected_s, questionnaire_median_s
    items: pd.DataFrame  # questionnaire_id, item_id, shown, unanswered, too_fast
    systems: pd.DataFrame  # system_id, exchanges, errors, latency_median_ms, latency_p90_ms
    hints: pd.DataFrame  # participant_id, session_id, hint, where, sent
    hint_places: pd.DataFrame  # hint, where, messages, participants


def pilot_findings(data: StudyData) -> PilotFindings:
    participants = data.participants
    simulated = int(participants["simulated"].fillna(0).astype(int).sum())
    events = data.events.astype({"kind": object, "participant_id": object})
    done = set(
        events.loc[
            events["kind"].isin([EventKind.STUDY_COMPLETED.value, EventKind.NOT_ELIGIBLE.value]),
            "participant_id",
        ]
    )
    drops = _drop_offs(data, done)
    hints = _hints(data)
    return PilotFindings(
        participants=len(participants),
        simulated=simulated,
        completed=len(done),
        drop_offs=drops,
        phases=_phases(data),
        items=_items(data, drops),
        systems=_systems(data),
        hints=hints,
        hint_places=hint_places(hints),
    )


def _item_texts(data: StudyData) -> dict[tuple[str, str], str]:
    items = data.items
    return {
        (str(q), str(i)): str(t)
        for q, i, t in zip(items["questionnaire_id"], items["item_id"], items["text"], strict=True)
    }


def _open_item(data: StudyData, session_id: str | None, scope: str) -> tuple[str, str] | None:
    """The first question of the questionnaires after ``session_id``'s task (or after the
    study) that has no answer in ``scope``: where a participant stopped."""
    bundle = data.bundle
    if bundle is None:
        return None
    sessions = data.sessions.astype({"session_id": object})
    if session_id is not None:
        row = sessions[sessions["session_id"] == session_id]
        if row.empty:
            return None
        scenario = bundle.scenarios.get(str(row["scenario_id"].iloc[0]))
        asked = scenario.post_task if scenario is not None else ()
    else:
        asked = bundle.study.post_study
    responses = data.responses.astype({"scope": object, "item_id": object})
    answered = set(responses.loc[responses["scope"] == scope, "item_id"])
    for questionnaire in asked:
        instrument = bundle.questionnaires.get(questionnaire)
        for item in instrument.items if instrument is not None else ():
            if item.id not in answered:
                return questionnaire, item.id
    return None


def _drop_offs(data: StudyData, done: set[str]) -> pd.DataFrame:
    rows = []
    texts = _item_texts(data)
    sessions = data.sessions.astype({"participant_id": object, "session_id": object})
    exchanges = data.exchanges.astype({"session_id": object})
    for participant, consent in zip(
        data.participants["participant_id"].astype(object),
        data.participants["consent"].astype(object),
        strict=True,
    ):
        if participant in done or consent == Consent.DECLINED:
            continue
        mine = sessions[sessions["participant_id"] == participant]
        if consent != Consent.ACCEPTED:
            rows.append((participant, "consent", "the agreement", ""))
            continue
        if mine.empty:
            rows.append((participant, "screening or assignment", "before any task", ""))
            continue
        last = mine.sort_values("started_at").iloc[-1]
        session, state = str(last["session_id"]), str(last["state"])
        if state in (SessionState.DIALOGUE, SessionState.ABANDONED) and pd.isna(last["ended_at"]):
            said = exchanges[exchanges["session_id"] == session]
            text = str(said["system_text"].iloc[-1]) if len(said) else ""
            rows.append((participant, f"dialogue ({last['scenario_id']})", "the chat", text))
            continue
        ended = state == SessionState.ENDED
        scope = "study" if ended else session
        open_item = _open_item(data, None if ended else session, scope)
        phase = "post-study questionnaire" if ended else "questionnaire after the task"
        if open_item is None:
            rows.append((participant, phase, "", ""))
        else:
            where = f"{open_item[0]} / {open_item[1]}"
            rows.append((participant, phase, where, texts.get(open_item, "")))
    return pd.DataFrame(rows, columns=["participant_id", "phase", "where", "text"])


def _phases(data: StudyData) -> pd.DataFrame:
    columns = ["scenario_id", "sessions", "task_median_s", "expected_s", "questionnaire_median_s"]
    sessions = data.sessions.astype({"session_id": object, "scenario_id": object})
    if sessions.empty:
        return pd.DataFrame(columns=columns)
    responses = data.responses.astype({"scope": object})
    answered_last = responses.groupby("scope", observed=True)["answered_at"].max()
    bundle = data.bundle
    rows = []
    for scenario, group in sessions.groupby("scenario_id", observed=True):
        task = (group["ended_at"] - group["started_at"]).dropna()
        after = answered_last.reindex(group["session_id"]).to_numpy() - group["ended_at"].to_numpy()
        after = pd.Series(after).dropna()
        spec = bundle.scenarios.get(str(scenario)) if bundle is not None else None
        expected = spec.expected_duration if spec is not None else None
        rows.append(
            (
                str(scenario),
                len(group),
                float(task.median()) if len(task) else None,
                expected,
                float(after.median()) if len(after) else None,
            )
        )
    return pd.DataFrame(rows, columns=columns)


def _items(data: StudyData, drops: pd.DataFrame) -> pd.DataFrame:
    columns = ["questionnaire_id", "item_id", "shown", "unanswered", "too_fast"]
    responses = data.responses.astype({"questionnaire_id": object, "item_id": object})
    if responses.empty and drops.empty:
        return pd.DataFrame(columns=columns)
    status = responses["status"].astype(object)
    keys = ["questionnaire_id", "item_id"]
    shown = responses.groupby(keys).size().rename("shown")
    unanswered = (
        responses[status.isin([AnswerStatus.SKIPPED.value, AnswerStatus.MISSING.value])]
        .groupby(keys)
        .size()
        .rename("unanswered")
    )
    times = reading_times(data.responses, data.items).astype(
        {"questionnaire_id": object, "item_id": object}
    )
    fast = times[times["too_fast"]].groupby(keys).size().rename("too_fast")
    table = pd.concat([shown, unanswered, fast], axis=1).fillna(0).astype(int)
    for where in drops["where"]:
        if " / " in where:
            key = tuple(where.split(" / ", 1))
            if key not in table.index:
                table.loc[key, :] = 0
            table.loc[key, "shown"] += 1
            table.loc[key, "unanswered"] += 1
    table = table.reset_index().rename(columns={"level_0": keys[0], "level_1": keys[1]})
    table = table[(table["unanswered"] > 0) | (table["too_fast"] > 0)]
    return table[columns].sort_values(keys).reset_index(drop=True)


def _systems(data: StudyData) -> pd.DataFrame:
    columns = ["system_id", "exchanges", "errors", "latency_median_ms", "latency_p90_ms"]
    sessions = data.sessions.astype({"session_id": object, "system_id": object})
    exchanges = data.exchanges.astype({"session_id": object})
    if exchanges.empty:
        return pd.DataFrame(columns=columns)
    system_of = dict(zip(sessions["session_id"], sessions["system_id"], strict=True))
    frame = exchanges.assign(system_id=exchanges["session_id"].map(system_of))
    rows = []
    for system, group in frame.groupby("system_id"):
        latency = group["latency_ms"].dropna()
        rows.append(
            (
                str(system),
                len(group),
                int(group["error"].notna().sum()),
                float(latency.median()) if len(latency) else None,
                float(latency.quantile(0.9)) if len(latency) else None,
            )
        )
    return pd.DataFrame(rows, columns=columns)


def _hints(data: StudyData) -> pd.DataFrame:
    columns = ["participant_id", "session_id", "hint", "where", "sent"]
    events = data.events.astype({"kind": object, "participant_id": object, "session_id": object})
    hinted = events[events["kind"] == EventKind.HINTED.value]
    scenario_of = dict(
        zip(
            data.sessions["session_id"].astype(object),
            data.sessions["scenario_id"].astype(object),
            strict=True,
        )
    )
    rows = []
    for participant, session, raw in zip(
        hinted["participant_id"], hinted["session_id"], hinted["data"], strict=True
    ):
        found = json.loads(raw) if isinstance(raw, str) and raw else {}
        hint, where = str(found.get("hint", "")), _place(found, session, scenario_of)
        rows.append((participant, session, hint, where, _sent(found)))
    return pd.DataFrame(rows, columns=columns)


def _place(found: dict[str, object], session: object, scenario_of: dict[object, object]) -> str:
    """Where the hint was given: the question open (``questionnaire / item``), else the
    chat of the session's scenario, else nothing (the agreement, or between tasks)."""
    if found.get("item"):
        asked = found.get("questionnaire")
        return f"{asked} / {found['item']}" if asked else str(found["item"])
    if isinstance(session, str) and session in scenario_of:
        return f"the chat ({scenario_of[session]})"
    return ""


def _sent(found: dict[str, object]) -> str:
    """What the participant sent, as far as it was kept (see ``bot.engine.hints``)."""
    if found.get("text") is not None:
        return str(found["text"])
    if found.get("sent") is not None:
        return f"({found['sent']})"
    if found.get("length") is not None:
        return f"({found['length']} characters)"
    return ""


def hint_places(hints: pd.DataFrame) -> pd.DataFrame:
    """Each place that needed hints, most hinted first: how many messages and how many
    participants got which hint there (the places a study confuses people)."""
    columns = ["hint", "where", "messages", "participants"]
    if hints.empty:
        return pd.DataFrame(columns=columns)
    places = hints.groupby(["hint", "where"], sort=False).agg(
        messages=("participant_id", "size"), participants=("participant_id", "nunique")
    )
    places = places.reset_index().sort_values(
        ["messages", "participants", "hint", "where"], ascending=[False, False, True, True]
    )
    return places[columns].reset_index(drop=True)
