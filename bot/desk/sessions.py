"""Rows of the sessions table, from the store's read model: where each participant stands
(``LiveParticipant``), the stored sessions, the gates and the study definitions.

Pure functions of their inputs and ``now``, so the console can redraw times every second
without asking the database again. Whether a session is gated is the engine's one rule,
``bot.core.vocabulary.effective_gate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.vocabulary import Gate, GateLevel, GateScope, SessionState, Stage, effective_gate
from bot.desk.model import (
    ERROR,
    GATED,
    PAUSED,
    SILENT,
    WAITING,
    LiveSession,
    WaitingReply,
)
from bot.store.model import LiveParticipant, SessionRecord
from scenarios.stored import StoredDefinition

_STATE_OF_STAGE = {Stage.FINISHED.value: "ended"}  # every other stage is shown by its own name
_TALKING = (Stage.DIALOGUE, Stage.QUESTIONNAIRE)
_LIVE = (Stage.CONSENT, Stage.ASSIGNING, Stage.HELD, *_TALKING)


@dataclass(frozen=True)
class StudyInfo:
    """What the console needs from a study definition."""

    reminder_after: float | None = None
    limits: Mapping[str, tuple[int | None, float | None]] = field(default_factory=dict)
    system_types: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_definition(cls, definition: StoredDefinition) -> StudyInfo:
        return cls(
            reminder_after=definition.reminder_after,
            limits={
                scenario_id: (s.max_exchanges, s.time_limit)
                for scenario_id, s in definition.scenarios.items()
            },
            system_types={s.id: s.type for s in definition.systems},
        )


def row_key(p: LiveParticipant) -> str:
    """The table row of a participant: their session, or themselves before they have one."""
    return p.status.session_id or p.participant_id


def current_session(
    p: LiveParticipant,
    stored: SessionRecord | None,
    study: StudyInfo,
    gates: Mapping[GateScope, Gate],
    now: float,
) -> LiveSession:
    """The row for a participant's current session (or the session they are about to get)."""
    s = p.status
    state = _STATE_OF_STAGE.get(s.stage.value, s.stage.value)
    limit, time_limit = study.limits.get(s.scenario_id or "", (None, None))
    started = s.session_started_at or 0.0
    elapsed: float | None = None
    stored_end = stored.ended_at if stored is not None else None
    if stored is not None and stored.ended_at is not None:
        elapsed = stored.ended_at - stored.started_at
    elif started > 0 and s.stage in _TALKING:
        elapsed = max(0.0, now - started)
    last = s.last_activity_at
    live = s.stage in _LIVE
    alerts = []
    if p.last_error is not None and s.stage is Stage.DIALOGUE:
        alerts.append(ERROR)
    if s.held is not None:
        alerts.append(WAITING)
    expecting = s.stage in _TALKING and s.held is None and not s.pending_message and not s.paused
    reminder = study.reminder_after
    quiet = reminder is not None and last > 0 and now - last >= reminder
    if expecting and (s.reminded or s.abandoned or quiet):
        alerts.append(SILENT)
    if s.session_id is not None and _gated(p, gates):
        alerts.append(GATED)
    if s.paused:
        alerts.append(PAUSED)
    return LiveSession(
        session_id=row_key(p),
        participant=p.participant_id,
        study=p.study_id,
        scenario=s.scenario_id,
        system=s.system_id,
        state=state,
        exchanges=s.exchanges,
        exchange_limit=limit,
        elapsed=elapsed,
        time_limit=time_limit,
        since_last_message=max(0.0, now - last) if live and last > 0 else None,
        alerts=tuple(alerts),
        error=p.last_error if ERROR in alerts else None,
        turn=s.turns,
        system_type=study.system_types.get(s.system_id or ""),
        own_gate=s.gated,
        started_at=started if elapsed is not None and stored_end is None else None,
        last_at=last if live and last > 0 else None,
    )


def past_session(row: SessionRecord, study: StudyInfo) -> LiveSession:
    """A session the participant has moved on from (shown only with the ended ones)."""
    limit, time_limit = study.limits.get(row.scenario_id, (None, None))
    ended = row.ended_at is not None or row.state is SessionState.QUESTIONNAIRE
    state = "ended" if ended else row.state.value
    elapsed = row.ended_at - row.started_at if row.ended_at is not None else None
    return LiveSession(
        session_id=row.session_id,
        participant=row.participant_id,
        study=row.study_id,
        scenario=row.scenario_id,
        system=row.system_id,
        state=state,
        exchanges=row.exchanges or 0,
        exchange_limit=limit,
        elapsed=elapsed,
        time_limit=time_limit,
        since_last_message=None,
        system_type=study.system_types.get(row.system_id),
        current=False,
    )


def waiting_reply(p: LiveParticipant) -> WaitingReply | None:
    held = p.status.held
    if held is None:
        return None
    return WaitingReply(
        session_id=row_key(p),
        participant=p.participant_id,
        system=p.status.system_id,
        turn=p.status.turns,
        message=p.status.pending_message or "",
        proposed=held.texts,
        since=held.since,
        auto_send_at=held.auto_send_at,
    )


def _gated(p: LiveParticipant, gates: Mapping[GateScope, Gate]) -> bool:
    """As the bot decides: the study's gate, else the system's, else the session's own."""
    own = None
    if p.status.gated and p.status.session_id is not None:
        scope = GateScope(GateLevel.SESSION, p.status.session_id)
        own = Gate(scope, True, p.status.gate_auto_send)
    return effective_gate(own, p.study_id, p.status.system_id, dict(gates)) is not None
