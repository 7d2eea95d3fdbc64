"""Rows that do not come from the engine: answers imported from a file, and synthetic
studies loaded in bulk for tests and benchmarks. Both run as writer jobs, so they take the
same lock, the same sequence and the same checks as the bot's own writes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from bot.core.vocabulary import Consent, EventKind, Origin
from bot.store.model import BulkRows, ImportedAnswer, ImportOutcome
from bot.store.transaction import Tx


def import_answers(
    tx: Tx,
    study_id: str,
    answers: Sequence[ImportedAnswer],
    source: Mapping[str, object],
    now: float,
    *,
    dry_run: bool,
) -> ImportOutcome:
    """All the answers or none: rolled back (to a savepoint, the writer's transaction may
    hold other jobs) on a dry run or when any answer is already stored."""
    conn = tx.conn
    conn.execute("SAVEPOINT import_answers")
    try:
        outcome = _import(tx, study_id, answers, source, now)
    except BaseException:
        conn.execute("ROLLBACK TO import_answers")
        conn.execute("RELEASE import_answers")
        raise
    if dry_run or not outcome.written:
        conn.execute("ROLLBACK TO import_answers")
    conn.execute("RELEASE import_answers")
    return outcome


def _import(
    tx: Tx,
    study_id: str,
    answers: Sequence[ImportedAnswer],
    source: Mapping[str, object],
    now: float,
) -> ImportOutcome:
    conn = tx.conn
    people = list(dict.fromkeys(a.participant_id for a in answers))
    new = 0
    for person in people:
        cursor = conn.execute(
            "INSERT INTO participants (id, study_id, chat_key, consent, created_at,"
            " updated_at, state, origin) VALUES (?, ?, NULL, ?, ?, ?, '{}', ?)"
            " ON CONFLICT DO NOTHING",
            (person, study_id, Consent.ACCEPTED.value, now, now, Origin.IMPORT.value),
        )
        new += cursor.rowcount
    duplicates: list[int] = []
    for a in answers:
        stored = conn.execute(
            "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id,"
            " item_id, value, label, text, status, shown_at, answered_at, turn, stimulus_id,"
            " attention_ok, moment, origin, system_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (
                a.participant_id,
                a.session_id,
                a.scope,
                a.questionnaire_id,
                a.item_id,
                a.value,
                a.label,
                a.text,
                a.status.value,
                a.shown_at,
                a.answered_at,
                a.turn,
                a.stimulus_id,
                None if a.attention_ok is None else int(a.attention_ok),
                a.moment.value,
                Origin.IMPORT.value,
                a.system_id,
            ),
        )
        if not stored.rowcount:  # the same answer twice: the whole import is refused
            duplicates.append(a.line)
    if duplicates:
        return ImportOutcome(False, 0, 0, 0, tuple(duplicates))
    data = {**source, "rows": len(answers), "participants": len(people), "new_participants": new}
    conn.execute(
        "INSERT INTO events (at, participant_id, session_id, kind, data, seq)"
        " VALUES (?, NULL, NULL, ?, ?, ?)",
        (now, EventKind.RESPONSES_IMPORTED.value, json.dumps(data), tx.seq()),
    )
    return ImportOutcome(True, len(answers), len(people), new)


def bulk_load(tx: Tx, rows: BulkRows) -> None:
    """Made-up rows, as the bot would have committed them (participants marked as not
    coming through Telegram: the bot never loads them)."""
    conn = tx.conn
    conn.executemany(
        "INSERT INTO participants (id, study_id, consent, consent_at, created_at, updated_at,"
        f" state, origin) VALUES (?,?,?,?,?,?,'{{}}','{Origin.IMPORT.value}')",
        [(*row, row[4]) for row in rows.participants],
    )
    conn.executemany(
        "INSERT INTO sessions (id, participant_id, study_id, scenario_id, system_id,"
        " task_index, design, seed, state, started_at, ended_at, end_reason, success, correct)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows.sessions,
    )
    conn.executemany(
        "INSERT INTO exchanges (session_id, turn, user_text, user_at, system_text, system_at,"
        " latency_ms, error, source, user_seq, system_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [(*row, tx.seq(), tx.seq()) for row in rows.exchanges],
    )
    conn.executemany(
        "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id, item_id,"
        " value, label, text, status, shown_at, answered_at, turn, stimulus_id, attention_ok,"
        " moment) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows.responses,
    )
    conn.executemany(
        "INSERT INTO events (at, participant_id, session_id, kind, data, seq) VALUES (?,?,?,?,?,?)",
        [(*row, tx.seq()) for row in rows.events],
    )
