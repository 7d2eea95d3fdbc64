"""Records of an engine step turned into rows, inside the writer's transaction.

Every line a participant sees gets the next number of one global sequence (``Tx.seq``), so
a transcript lists lines in the order they were committed, whatever their clock says.
"""

from __future__ import annotations

import json
from typing import assert_never

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Origin
from bot.engine import effects as fx
from bot.store import recruiting, votes
from bot.store.model import StepCommit
from bot.store.sql import Sql
from bot.store.transaction import Tx

_UPSERT = (
    "INSERT INTO participants (id, study_id, chat_key, created_at, updated_at, state,"
    " undelivered) VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET"
    " state = excluded.state, updated_at = excluded.updated_at,"
    " undelivered = excluded.undelivered,"
    " chat_key = COALESCE(participants.chat_key, excluded.chat_key)"
)
_UPSERT_WITH_STATUS = (
    "INSERT INTO participants (id, study_id, chat_key, created_at, updated_at, state,"
    " undelivered, stage, last_activity_at, session_id, scenario_id, system_id,"
    " session_started_at, exchanges, turns, pending_message, held_texts, held_since,"
    " held_auto_send_at, paused, gated, gate_auto_send, reminded, abandoned, design_cell)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET"
    " state = excluded.state, updated_at = excluded.updated_at,"
    " undelivered = excluded.undelivered,"
    " chat_key = COALESCE(participants.chat_key, excluded.chat_key),"
    " stage = excluded.stage, last_activity_at = excluded.last_activity_at,"
    " session_id = excluded.session_id, scenario_id = excluded.scenario_id,"
    " system_id = excluded.system_id, session_started_at = excluded.session_started_at,"
    " exchanges = excluded.exchanges, turns = excluded.turns,"
    " pending_message = excluded.pending_message, held_texts = excluded.held_texts,"
    " held_since = excluded.held_since, held_auto_send_at = excluded.held_auto_send_at,"
    " paused = excluded.paused, gated = excluded.gated,"
    " gate_auto_send = excluded.gate_auto_send, reminded = excluded.reminded,"
    " abandoned = excluded.abandoned, design_cell = excluded.design_cell"
)
"""The state and the status in one statement: the hot path's one participant write."""
_STATUS = (
    "UPDATE participants SET stage = ?, last_activity_at = ?, session_id = ?, scenario_id = ?,"
    " system_id = ?, session_started_at = ?, exchanges = ?, turns = ?, pending_message = ?,"
    " held_texts = ?, held_since = ?, held_auto_send_at = ?, paused = ?, gated = ?,"
    " gate_auto_send = ?, reminded = ?, abandoned = ?, design_cell = ? WHERE id = ?"
)


def commit_step(tx: Tx, step: StepCommit, now: float) -> None:
    """The participant's new state and status, the step's rows, and the update it consumed
    (an earlier step's rows and update first, at their own time)."""
    conn = tx.conn
    turns = _Exchanges(tx)
    if (earlier := step.earlier) is not None:
        for record in earlier.records:
            turns.apply(step.study_id, step.participant_id, record, earlier.at)
        if earlier.update_id is not None:
            consume(conn, earlier.update_id, earlier.at)
    if step.state is not None:
        row = (
            step.participant_id,
            step.study_id,
            step.chat_key,
            now,
            now,
            step.state,
            step.undelivered,
        )
        if step.status is not None:
            conn.execute(_UPSERT_WITH_STATUS, (*row, *status_row(step.status)))
        else:
            conn.execute(_UPSERT, row)
    elif step.status is not None:
        conn.execute(_STATUS, (*status_row(step.status), step.participant_id))
    if step.status is not None:
        recruiting.follow_activity(conn, step.participant_id, step.status.last_activity_at)
    for record in step.records:
        turns.apply(step.study_id, step.participant_id, record, now)
    turns.finish()
    for digest, data in step.files.items():  # a file kept twice is kept once
        conn.execute(
            "INSERT INTO media_files (digest, data) VALUES (?,?) ON CONFLICT(digest) DO NOTHING",
            (digest, data),
        )
    if step.update_id is not None:
        consume(conn, step.update_id, now)


class _Exchanges:
    """A step's records applied in order, but for a participant's line whose reply the same
    step records: the exchange is then one row, inserted whole, not inserted and then
    updated (a statement fewer an exchange, on the hot path of every backend). The line
    takes its place in the sequence where it was recorded, as when written alone."""

    def __init__(self, tx: Tx) -> None:
        self._tx = tx
        self._lines: dict[tuple[str, int], tuple[fx.RecordUserTurn, float, int]] = {}
        """Each line held back: the record, its time, its place in the sequence."""

    def apply(self, study_id: str, participant_id: str, record: fx.Record, now: float) -> None:
        match record:
            case fx.RecordUserTurn(session_id=session_id, turn=turn):
                self._lines[(session_id, turn)] = (record, now, self._tx.seq())
            case fx.RecordSystemTurn(session_id=session_id, turn=turn) if (
                session_id,
                turn,
            ) in self._lines:
                line, at, seq = self._lines.pop((session_id, turn))
                self._tx.conn.execute(
                    "INSERT INTO exchanges (session_id, turn, user_text, user_at, user_seq,"
                    " system_text, system_at, latency_ms, error, source, original_text, wizard,"
                    " system_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (session_id, turn, line.text, at, seq, *_reply(record, now, self._tx.seq())),
                )
            case _:
                apply(self._tx, study_id, participant_id, record, now)

    def finish(self) -> None:
        """The lines whose reply is still to come, as rows of their own."""
        for line, at, seq in self._lines.values():
            _insert_line(self._tx.conn, line, at, seq)
        self._lines.clear()


def _insert_line(conn: Sql, line: fx.RecordUserTurn, at: float, seq: int) -> None:
    conn.execute(
        "INSERT INTO exchanges (session_id, turn, user_text, user_at, user_seq) VALUES (?,?,?,?,?)",
        (line.session_id, line.turn, line.text, at, seq),
    )


def _reply(record: fx.RecordSystemTurn, now: float, seq: int) -> tuple[object, ...]:
    """The reply's columns of an exchange: text, time, latency, error, source, the system's
    own words when a wizard changed them, the wizard, and the reply's place in the sequence."""
    return (
        record.text,
        now,
        round(record.latency_ms, 3),
        record.error,
        record.source.value if record.text is not None else None,
        record.original_text,
        record.wizard,
        seq,
    )


def consume(conn: Sql, update_id: int, now: float) -> None:
    """The Telegram update is handled: its payload goes, its id stays (redeliveries)."""
    conn.execute(
        "UPDATE inbox SET handled_at = ?, payload = NULL WHERE update_id = ?", (now, update_id)
    )


def status_row(s: ParticipantStatus) -> tuple[object, ...]:
    held = s.held
    return (
        s.stage.value,
        s.last_activity_at,
        s.session_id,
        s.scenario_id,
        s.system_id,
        s.session_started_at,
        s.exchanges,
        s.turns,
        s.pending_message,
        json.dumps(list(held.texts)) if held is not None else None,
        held.since if held is not None else None,
        held.auto_send_at if held is not None else None,
        int(s.paused),
        int(s.gated),
        s.gate_auto_send,
        int(s.reminded),
        int(s.abandoned),
        s.cell,
    )


def apply(tx: Tx, study_id: str, participant_id: str, record: fx.Record, now: float) -> None:
    """One record as rows; a record type this function does not know fails type checking."""
    conn = tx.conn
    match record:
        case fx.RecordConsent(decision=decision):
            conn.execute(
                "UPDATE participants SET consent = ?, consent_at = ? WHERE id = ?",
                (decision.value, now, participant_id),
            )
        case fx.OpenSession():
            conn.execute(
                "INSERT INTO sessions (id, participant_id, study_id, scenario_id, system_id,"
                " task_index, design, seed, state, started_at)"
                " VALUES (?,?,?,?,?,?,?,?,'dialogue',?)",
                (
                    record.session_id,
                    participant_id,
                    study_id,
                    record.scenario_id,
                    record.system_id,
                    record.task_index,
                    record.design,
                    record.seed,
                    now,
                ),
            )
        case fx.SetSessionState(session_id=session_id, state=state):
            conn.execute("UPDATE sessions SET state = ? WHERE id = ?", (state.value, session_id))
        case fx.CloseSession(session_id=session_id, reason=reason, success=success):
            correct = None if record.correct is None else int(record.correct)
            conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?, success = ?, correct = ?,"
                " end_seq = ? WHERE id = ?",
                (now, reason.value, int(success), correct, tx.seq(), session_id),
            )
        case fx.RecordUserTurn():
            _insert_line(conn, record, now, tx.seq())
        case fx.RecordSystemTurn():
            conn.execute(
                "UPDATE exchanges SET system_text = ?, system_at = ?, latency_ms = ?, error = ?,"
                " source = ?, original_text = ?, wizard = ?, system_seq = ?"
                " WHERE session_id = ? AND turn = ?",
                (*_reply(record, now, tx.seq()), record.session_id, record.turn),
            )
        case fx.SetSuccess(session_id=session_id, success=success):
            conn.execute(
                "UPDATE sessions SET success = ?, correct = ? WHERE id = ?",
                (int(success), int(success), session_id),
            )
        case fx.RecordCommand(command_id=command_id, outcome=outcome):
            settle_command(conn, command_id, outcome.value, now)
        case fx.RecordGate(scope=scope, gated=gated, auto_send_after=auto, wizard=wizard):
            conn.execute(
                "INSERT INTO gates (scope, gated, auto_send_after, wizard, set_at)"
                " VALUES (?,?,?,?,?) ON CONFLICT(scope) DO UPDATE SET gated = excluded.gated,"
                " auto_send_after = excluded.auto_send_after, wizard = excluded.wizard,"
                " set_at = excluded.set_at",
                (str(scope), int(gated), auto, wizard, now),
            )
        case fx.RecordResponse():
            conn.execute(
                "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id,"
                " item_id, value, label, text, status, shown_at, answered_at, turn, stimulus_id,"
                " attention_ok, moment) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    participant_id,
                    record.session_id,
                    record.scope or record.session_id or "study",
                    record.questionnaire_id,
                    record.item_id,
                    record.value,
                    record.label,
                    record.text,
                    record.status.value,
                    record.shown_at,
                    now,
                    record.turn,
                    record.stimulus_id,
                    None if record.attention_ok is None else int(record.attention_ok),
                    record.moment.value,
                ),
            )
        case fx.RecordEvent(kind=kind, session_id=session_id, data=data):
            conn.execute(
                "INSERT INTO events (at, participant_id, session_id, kind, data, seq)"
                " VALUES (?,?,?,?,?,?)",
                (
                    now,
                    participant_id or None,
                    session_id,
                    kind.value,
                    json.dumps(dict(data)),
                    tx.seq(),
                ),
            )
        case fx.ClaimInvitation(code=code):
            recruiting.claim(conn, code, participant_id, now)
        case fx.RecordRecruitment(platform=platform, platform_key=key, status=paid, since=at):
            arrived, last = at if at is not None else (now, now)
            recruiting.begin_payment(
                conn, study_id, participant_id, platform, key, paid, arrived, last
            )
        case fx.SetPaymentStatus(status=status):
            recruiting.set_status(conn, participant_id, status, now)
        case fx.RecordVote(vote=vote):
            votes.insert(conn, study_id, vote, Origin.TELEGRAM, now)
        case fx.RecordMedia(medium=medium, transcript=heard):
            conn.execute(
                "INSERT INTO media (participant_id, session_id, turn, kind, mime, duration,"
                " width, height, size, digest, kept, transcript, engine, model, fetch_ms,"
                " transcribe_ms, at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    participant_id,
                    record.session_id,
                    record.turn,
                    medium.kind,
                    medium.mime,
                    medium.duration,
                    medium.width,
                    medium.height,
                    record.size,
                    record.digest,
                    int(record.kept),
                    heard.text if heard is not None else None,
                    heard.engine if heard is not None else None,
                    heard.model if heard is not None else None,
                    round(record.fetch_ms, 3),
                    round(record.transcribe_ms, 3) if record.transcribe_ms is not None else None,
                    now,
                ),
            )
        case _:
            assert_never(record)


def settle_command(conn: Sql, command_id: int, outcome: str, now: float) -> None:
    """A command's outcome, set once: a second settlement changes nothing."""
    conn.execute(
        "UPDATE commands SET applied_at = ?, outcome = ? WHERE id = ? AND applied_at IS NULL",
        (now, outcome, command_id),
    )
