"""Rows of the sessions table, built from what the bot stored: the participants' states (JSON
snapshots of the engine's journey), the sessions, the gates and the study definitions.

Pure functions of their inputs and ``now``, so the console can redraw times every second
without asking the database again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wizard_console.model import (
    ERROR,
    GATED,
    PAUSED,
    SILENT,
    WAITING,
    Gate,
    LiveSession,
    WaitingReply,
)

_STATE_OF_STAGE = {"finished": "ended"}  # every other stage is shown by its own name
_TALKING = ("dialogue", "questionnaire")


@dataclass(frozen=True)
class StudyInfo:
    """What the console needs from a study definition (the ``studies`` table)."""

    reminder_after: float | None = None
    limits: Mapping[str, tuple[int | None, float | None]] = field(default_factory=dict)
    system_types: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_definition(cls, raw: str) -> StudyInfo:
        definition = json.loads(raw)
        study = definition.get("study", {})
        scenarios = definition.get("scenarios", {})
        return cls(
            reminder_after=(study.get("timing") or {}).get("reminder_after"),
            limits={
                sid: (s.get("max_exchanges"), s.get("time_limit")) for sid, s in scenarios.items()
            },
            system_types={s["id"]: s.get("type", "") for s in study.get("systems", [])},
        )


@dataclass(frozen=True)
class Participant:
    """One participant as the bot last committed them (``state`` parsed once per change)."""

    id: str
    study: str
    raw: str
    state: dict[str, Any]

    @classmethod
    def parse(cls, participant_id: str, study: str, raw: str) -> Participant:
        return cls(participant_id, study, raw, json.loads(raw))

    @property
    def tasks(self) -> list[dict[str, str]]:
        return self.state.get("tasks") or []

    @property
    def task_index(self) -> int:
        return int(self.state.get("task_index") or 0)

    @property
    def session_id(self) -> str:
        return f"{self.id}-{self.task_index + 1}"

    @property
    def task(self) -> dict[str, str] | None:
        tasks = self.tasks
        return tasks[self.task_index] if self.task_index < len(tasks) else None


@dataclass(frozen=True)
class SessionRow:
    """A row of the ``sessions`` table."""

    id: str
    participant: str
    study: str
    scenario: str
    system: str
    state: str
    started_at: float
    ended_at: float | None


def current_session(
    p: Participant,
    stored: SessionRow | None,
    study: StudyInfo,
    gates: Mapping[str, Gate],
    error: str | None,
    now: float,
) -> LiveSession:
    """The row for a participant's current session (or the session they are about to get)."""
    j = p.state
    stage = str(j.get("stage", ""))
    state = _STATE_OF_STAGE.get(stage, stage)
    task = p.task
    scenario = task["scenario_id"] if task else None
    system = task["system_id"] if task else None
    limit, time_limit = study.limits.get(scenario or "", (None, None))
    started = float(j.get("session_started_at") or 0.0)
    elapsed: float | None = None
    stored_end = stored.ended_at if stored is not None else None
    if stored is not None and stored.ended_at is not None:
        elapsed = stored.ended_at - stored.started_at
    elif started > 0 and stage in _TALKING:
        elapsed = max(0.0, now - started)
    last = float(j.get("last_activity_at") or 0.0)
    live = state in ("consent", "assigning", "held", *_TALKING)
    alerts = []
    if error is not None and stage == "dialogue":
        alerts.append(ERROR)
    if j.get("waiting") is not None:
        alerts.append(WAITING)
    expecting = (
        stage in _TALKING
        and j.get("waiting") is None
        and not j.get("pending_message")
        and not j.get("paused")
    )
    reminder = study.reminder_after
    quiet = reminder is not None and last > 0 and now - last >= reminder
    if expecting and (j.get("reminded") or j.get("abandoned") or quiet):
        alerts.append(SILENT)
    if task is not None and _gated(j, p.study, system, gates):
        alerts.append(GATED)
    if j.get("paused"):
        alerts.append(PAUSED)
    return LiveSession(
        session_id=p.session_id,
        participant=p.id,
        study=p.study,
        scenario=scenario,
        system=system,
        state=state,
        exchanges=int(j.get("exchanges") or 0),
        exchange_limit=limit,
        elapsed=elapsed,
        time_limit=time_limit,
        since_last_message=max(0.0, now - last) if live and last > 0 else None,
        alerts=tuple(alerts),
        error=error if ERROR in alerts else None,
        turn=int(j.get("turns") or 0),
        system_type=study.system_types.get(system or ""),
        own_gate=bool(j.get("gated")),
        started_at=started if elapsed is not None and stored_end is None else None,
        last_at=last if live and last > 0 else None,
    )


def past_session(row: SessionRow, study: StudyInfo, exchanges: int) -> LiveSession:
    """A session the participant has moved on from (shown only with the ended ones)."""
    limit, time_limit = study.limits.get(row.scenario, (None, None))
    state = "ended" if row.ended_at is not None or row.state == "questionnaire" else row.state
    elapsed = row.ended_at - row.started_at if row.ended_at is not None else None
    return LiveSession(
        session_id=row.id,
        participant=row.participant,
        study=row.study,
        scenario=row.scenario,
        system=row.system,
        state=state,
        exchanges=exchanges,
        exchange_limit=limit,
        elapsed=elapsed,
        time_limit=time_limit,
        since_last_message=None,
        system_type=study.system_types.get(row.system),
        current=False,
    )


def waiting_reply(p: Participant) -> WaitingReply | None:
    waiting = p.state.get("waiting")
    if waiting is None:
        return None
    task = p.task
    return WaitingReply(
        session_id=p.session_id,
        participant=p.id,
        system=task["system_id"] if task else None,
        turn=int(p.state.get("turns") or 0),
        message=str(p.state.get("pending_message") or ""),
        proposed=tuple(waiting.get("texts") or ()),
        since=float(waiting.get("since") or 0.0),
        auto_send_at=waiting.get("auto_send_at"),
    )


def _gated(j: Mapping[str, Any], study: str, system: str | None, gates: Mapping[str, Gate]) -> bool:
    """The session's own gate, or its system's, or the whole study's (as the bot decides)."""
    if j.get("gated"):
        return True
    scopes = (f"study:{study}", f"system:{system}")
    return any(gates[s].gated for s in scopes if s in gates)
