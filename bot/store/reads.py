"""What the console, the demo's summary and importers read: short queries, each run inside
one read transaction by the backend and fetched in full (an open cursor holds back the
WAL checkpoints of a running bot)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from enum import StrEnum
from typing import TypeVar

from bot.core.annotation import TranscriptExchange
from bot.core.errors import StudyDataError
from bot.core.media import FileShown
from bot.core.participants import HeldReply, ParticipantStatus
from bot.core.vocabulary import (
    CommandKind,
    CommandOutcome,
    EndReason,
    EventKind,
    Gate,
    GateScope,
    ReplySource,
    SessionState,
    Stage,
)
from bot.store.model import (
    Command,
    ImportContext,
    LiveParticipant,
    SessionRecord,
    SystemHealth,
    SystemSummary,
    Transcript,
    TranscriptEvent,
)
from bot.store.sql import Sql

log = logging.getLogger(__name__)

_E = TypeVar("_E", bound=StrEnum)


def _member(enum: type[_E], value: object) -> _E | None:
    """The member of ``enum`` stored as ``value``, or None (a value of another ozlab)."""
    try:
        return enum(str(value)) if value is not None else None
    except ValueError:
        return None


_PARTICIPANTS = (
    "SELECT p.id, p.study_id, p.stage, p.last_activity_at, p.session_id, p.scenario_id,"
    " p.system_id, p.session_started_at, p.exchanges, p.turns, p.pending_message,"
    " p.held_texts, p.held_since, p.held_auto_send_at, p.paused, p.gated, p.gate_auto_send,"
    " p.reminded, p.abandoned, p.design_cell, e.error"
    " FROM participants AS p LEFT JOIN exchanges AS e ON e.session_id = p.session_id"
    " AND e.turn = p.turns AND p.turns > 0 AND e.system_text IS NULL"
    " WHERE p.origin = 'telegram' AND p.stage IS NOT NULL"
)


def live_participants(conn: Sql, *, held_only: bool = False) -> list[LiveParticipant]:
    """In the order they arrived; with ``held_only``, those with a reply held, oldest first."""
    sql = _PARTICIPANTS + (
        " AND p.held_since IS NOT NULL ORDER BY p.held_since, p.id"
        if held_only
        else " ORDER BY p.created_at, p.id"
    )
    return [_participant(row) for row in conn.execute(sql).fetchall()]


def _participant(row: Sequence[object]) -> LiveParticipant:
    (pid, study, stage, last, session, scenario, system, started, exchanges, turns, pending,
     texts, since, auto, paused, gated, gate_auto, reminded, abandoned, cell,
     error) = row  # fmt: skip
    held = None
    if since is not None:
        held = HeldReply(tuple(json.loads(str(texts or "[]"))), _float(since) or 0.0, _float(auto))
    status = ParticipantStatus(
        stage=Stage(str(stage)),
        last_activity_at=_float(last) or 0.0,
        session_id=_str(session),
        scenario_id=_str(scenario),
        system_id=_str(system),
        session_started_at=_float(started),
        exchanges=int(str(exchanges or 0)),
        turns=int(str(turns or 0)),
        pending_message=_str(pending),
        held=held,
        paused=bool(paused),
        gated=bool(gated),
        gate_auto_send=_float(gate_auto),
        reminded=bool(reminded),
        abandoned=bool(abandoned),
        cell=_str(cell),
    )
    return LiveParticipant(str(pid), str(study), status, _str(error))


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _float(value: object) -> float | None:
    return None if value is None else float(str(value))


def sessions(conn: Sql, *, count_exchanges: bool) -> list[SessionRecord]:
    """Every session in the order they started; the answered exchanges counted if asked."""
    counted = (
        "(SELECT count(system_text) FROM exchanges AS e WHERE e.session_id = s.id)"
        if count_exchanges
        else "NULL"
    )
    rows = conn.execute(
        "SELECT id, participant_id, study_id, scenario_id, system_id, state, started_at,"
        f" ended_at, end_reason, success, {counted} FROM sessions AS s ORDER BY started_at, id"
    ).fetchall()
    return [
        SessionRecord(
            session_id=sid,
            participant_id=pid,
            study_id=study,
            scenario_id=scenario,
            system_id=system,
            state=SessionState(state),
            started_at=started,
            ended_at=ended,
            end_reason=_member(EndReason, reason),
            success=None if success is None else bool(success),
            exchanges=count,
        )
        for sid, pid, study, scenario, system, state, started, ended, reason, success, count in rows
    ]


def transcript(conn: Sql, session_id: str) -> Transcript | None:
    ended = conn.execute(
        "SELECT ended_at, end_reason, end_seq FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    exchanges = conn.execute(
        "SELECT x.id, x.turn, x.user_text, x.user_at, x.user_seq, x.system_text, x.system_at,"
        " x.system_seq, x.error, x.source, x.original_text, x.wizard,"
        " m.kind, m.duration, m.width, m.height"
        " FROM exchanges x LEFT JOIN media m ON m.session_id = x.session_id AND m.turn = x.turn"
        " WHERE x.session_id = ? ORDER BY x.turn",
        (session_id,),
    ).fetchall()
    events = conn.execute(
        "SELECT id, seq, at, kind, data FROM events WHERE session_id = ? ORDER BY id",
        (session_id,),
    ).fetchall()
    if ended is None and not exchanges and not events:
        return None
    ended_at, reason, end_seq = ended if ended is not None else (None, None, None)
    return Transcript(
        session_id=session_id,
        exchanges=tuple(
            TranscriptExchange(
                exchange_id=xid,
                turn=turn,
                user_text=user,
                user_at=user_at,
                user_seq=user_seq,
                system_text=text,
                system_at=at,
                system_seq=seq,
                error=error,
                source=_member(ReplySource, source),
                original_text=original,
                wizard=wizard,
                file=None if kind is None else FileShown(kind, duration, width, height),
            )
            for (
                xid,
                turn,
                user,
                user_at,
                user_seq,
                text,
                at,
                seq,
                error,
                source,
                original,
                wizard,
                kind,
                duration,
                width,
                height,
            ) in exchanges
        ),
        events=tuple(
            TranscriptEvent(
                event_id,
                seq,
                at,
                _member(EventKind, kind) or kind,
                json.loads(data or "{}"),
            )
            for event_id, seq, at, kind, data in events
        ),
        ended_at=ended_at,
        end_reason=_member(EndReason, reason) or reason,
        end_seq=end_seq,
    )


def latest_definitions(conn: Sql) -> dict[str, str]:
    rows = conn.execute(
        "SELECT study_id, definition FROM studies"
        " WHERE id IN (SELECT max(id) FROM studies GROUP BY study_id) ORDER BY id"
    ).fetchall()
    return {study: definition for study, definition in rows}


def gates(conn: Sql) -> dict[GateScope, Gate]:
    found: dict[GateScope, Gate] = {}
    for raw, gated, auto, wizard, set_at in conn.execute(
        "SELECT scope, gated, auto_send_after, wizard, set_at FROM gates"
    ).fetchall():
        try:
            scope = GateScope.parse(raw)
        except StudyDataError:
            log.warning("a stored gate has a scope ozlab cannot read: %r", raw)
            continue
        found[scope] = Gate(scope, bool(gated), auto, wizard, set_at)
    return found


def pending_commands(conn: Sql, after: int) -> tuple[list[Command], list[int]]:
    """Commands to apply, and the ids of those no ozlab could apply (an unknown kind, a
    payload that is not a JSON object): the backend settles those as rejected."""
    commands: list[Command] = []
    unreadable: list[int] = []
    for command_id, at, wizard, kind, session_id, payload in conn.execute(
        "SELECT id, at, wizard, kind, session_id, payload FROM commands"
        " WHERE applied_at IS NULL AND id > ? ORDER BY id",
        (after,),
    ).fetchall():
        try:
            data = json.loads(payload or "{}")
        except ValueError:
            data = None
        known = _member(CommandKind, kind)
        if known is None or not isinstance(data, dict):
            unreadable.append(command_id)
            continue
        commands.append(Command(command_id, at, wizard, known, session_id, data))
    return commands, unreadable


def system_health(conn: Sql, since: float) -> list[SystemHealth]:
    """Per system, the exchanges a participant began since ``since``: how many, how many
    failed, and the median and 95th percentile (nearest rank) of the answers' latency."""
    found: dict[str, tuple[int, int, list[float]]] = {}
    for system_id, latency, error in conn.execute(
        "SELECT s.system_id, e.latency_ms, e.error FROM exchanges e"
        " JOIN sessions s ON s.id = e.session_id WHERE e.user_at >= ?",
        (since,),
    ):
        count, failed, latencies = found.get(str(system_id), (0, 0, []))
        if latency is not None and error is None:
            latencies.append(float(latency))
        found[str(system_id)] = (count + 1, failed + (error is not None), latencies)
    return [
        SystemHealth(system, count, failed, _rank(latencies, 0.5), _rank(latencies, 0.95))
        for system, (count, failed, latencies) in sorted(found.items())
    ]


def _rank(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def command_outcomes(conn: Sql, command_ids: Sequence[int]) -> dict[int, CommandOutcome | None]:
    found: dict[int, CommandOutcome | None] = {}
    ids = list(command_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for command_id, outcome in conn.execute(
            f"SELECT id, outcome FROM commands WHERE id IN ({marks})", chunk
        ).fetchall():
            found[command_id] = CommandOutcome(outcome) if outcome is not None else None
    return found


def import_context(conn: Sql, study_id: str) -> ImportContext:
    sessions = conn.execute(
        "SELECT id, participant_id, system_id FROM sessions WHERE study_id = ?", (study_id,)
    ).fetchall()
    people = conn.execute("SELECT id, study_id FROM participants").fetchall()
    return ImportContext(
        sessions={sid: (pid, system) for sid, pid, system in sessions},
        participants=dict(people),
    )


def system_summaries(conn: Sql) -> list[SystemSummary]:
    """Per system; a side-by-side session (one with a ``sides_drawn`` event) met two systems
    at once, so it is its pair's row ("a + b"), with its answers, not the design's system's."""
    pairs: dict[str, str] = {}
    for session_id, data in conn.execute(
        "SELECT session_id, data FROM events WHERE kind = ? AND session_id IS NOT NULL ORDER BY id",
        (EventKind.SIDES_DRAWN.value,),
    ).fetchall():
        sides = json.loads(data or "{}")
        pairs[str(session_id)] = " + ".join(sorted((str(sides["a"]), str(sides["b"]))))
    sessions = conn.execute(
        "SELECT s.id, s.system_id, COALESCE(s.success, 0),"
        " CASE WHEN s.ended_at IS NOT NULL THEN 1 ELSE 0 END,"
        " (SELECT COUNT(*) FROM exchanges e WHERE e.session_id = s.id"
        "  AND e.system_text IS NOT NULL)"
        " FROM sessions s ORDER BY s.system_id, s.id"
    ).fetchall()
    rows: dict[str, list[int]] = {}  # row -> sessions, succeeded, ended, exchanges
    for session_id, system_id, succeeded, ended, exchanges in sessions:
        counts = rows.setdefault(pairs.get(str(session_id), str(system_id)), [0, 0, 0, 0])
        for k, value in enumerate((1, succeeded, ended, exchanges)):
            counts[k] += int(value)
    answers = conn.execute(
        "SELECT s.id, s.system_id, r.item_id, r.value FROM responses r"
        " JOIN sessions s ON s.id = r.session_id WHERE r.value IS NOT NULL ORDER BY r.id"
    ).fetchall()
    values: dict[str, dict[str, list[float]]] = {}
    for session_id, system_id, item_id, value in answers:
        row = pairs.get(str(session_id), str(system_id))
        values.setdefault(row, {}).setdefault(str(item_id), []).append(float(value))
    shared = set(pairs.values())
    return [
        SystemSummary(
            row,
            n,
            succeeded,
            ended,
            exchanges / n if n else 0.0,
            {item: sum(v) / len(v) for item, v in values.get(row, {}).items()},
            side_by_side=row in shared,
        )
        for row, (n, succeeded, ended, exchanges) in sorted(rows.items())
    ]
