"""A participant's erasure (GDPR art. 17), inside the writer's transaction.

Every row that is theirs or names them goes in one transaction: their answers, exchanges,
sessions, events, votes (theirs, and those that showed one of their sessions), the commands
and gates about their sessions, inbox payloads still pending,
and the participant row itself (the state snapshot, undelivered messages, the encrypted chat
id). Session ids carry the pseudonym, so anything keyed by a session goes too. What remains
is an anonymous count of withdrawals per study (and per system when the study, as stored in
the file, asks), and a line in the erasure ledger: a digest of the pseudonym and the time,
so that the same person can be erased from backups (:func:`apply_ledger`).

The connection runs with ``secure_delete``: deleted content is overwritten in the file, and
the caller checkpoints the WAL (TRUNCATE) once the transaction is committed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from bot.store import annotator_erasure
from bot.store.model import Erased, ErasureRecord
from bot.store.sql import Queries, Sql, has_table
from scenarios.stored import read_definition


def ledger_digest(pseudonym: str) -> str:
    """One-way: whoever holds a pseudonym (a backup does) can match it to the ledger; the
    ledger alone names nobody."""
    return hashlib.sha256(f"ozlab erasure ledger:{pseudonym}".encode()).hexdigest()


def erase_participant(
    conn: Sql,
    participant_id: str,
    update_ids: Sequence[int],
    *,
    command_id: int | None = None,
    now: float = 0.0,
) -> Erased | None:
    """Delete everything of ``participant_id``; ``None`` when nothing of theirs was stored.
    ``update_ids``: their updates still pending in the inbox (only a holder of the secret
    can tell which those are: the payloads are sealed). ``command_id``: the operator's
    erase command, settled here, in the same transaction. ``now``: the time the ledger
    keeps (a backup is given the live erasure's own)."""
    if command_id is not None:
        conn.execute(
            "UPDATE commands SET applied_at = ?, outcome = 'applied' WHERE id = ?",
            (now, command_id),
        )
    # Commands that name the participant (an erase command's payload) keep no trace of them.
    conn.execute(
        "UPDATE commands SET payload = '{}' WHERE instr(payload, ?) > 0", (participant_id,)
    )
    found = conn.execute(
        "SELECT study_id FROM participants WHERE id = ?", (participant_id,)
    ).fetchone()
    sessions = [
        (str(row[0]), str(row[1]), str(row[2]))
        for row in conn.execute(
            "SELECT id, system_id, study_id FROM sessions WHERE participant_id = ?",
            (participant_id,),
        )
    ]
    if found is None and not sessions:
        return None
    study_id = str(found[0]) if found is not None else ""
    ids = [session_id for session_id, _, _ in sessions]
    marks = ",".join("?" * len(ids))
    counts: dict[str, int] = {}

    def delete(table: str, where: str, params: Sequence[object]) -> None:
        counts[table] = (
            counts.get(table, 0)
            + conn.execute(f"DELETE FROM {table} WHERE {where}", tuple(params)).rowcount
        )

    delete("responses", "participant_id = ?", [participant_id])
    delete("events", "participant_id = ?", [participant_id])
    delete("media", "participant_id = ?", [participant_id])
    # a kept file no row names any more (another participant may have sent the same bytes)
    delete("media_files", "digest NOT IN (SELECT digest FROM media)", [])
    if ids:
        delete("responses", f"session_id IN ({marks})", ids)
        delete("exchanges", f"session_id IN ({marks})", ids)
        delete("events", f"session_id IN ({marks})", ids)
        delete("commands", f"session_id IN ({marks})", ids)
        delete("gates", f"scope IN ({marks})", [f"session:{i}" for i in ids])
        # A pair (ACUTE) is kept with the session shown first: the triggers take it with
        # that one; with the one shown second it goes here.
        paired = (
            "SELECT id FROM annotation_targets WHERE level = 'pair'"
            f" AND substr(target, instr(target, '~') + 1) IN ({marks})"
        )
        delete("annotations", f"target_id IN ({paired})", ids)
        delete("annotation_assignments", f"target_id IN ({paired})", ids)
        delete("annotation_targets", f"id IN ({paired})", ids)
    delete("votes", "rater = ? AND rater_kind = 'participant'", [participant_id])
    if ids:
        for column in ("session_id", "session_a", "session_b"):
            delete("votes", f"{column} IN ({marks})", ids)
    for update_id in update_ids:
        delete("inbox", "update_id = ? AND handled_at IS NULL", [update_id])
    delete("sessions", "participant_id = ?", [participant_id])
    delete("participants", "id = ?", [participant_id])
    if study_id:
        # read from the data itself, so every erasure of the file (the bot's, the
        # command's, a backup's) counts alike
        stored = read_definition(study_id, _definition(conn, study_id))
        per_system = stored.withdrawals_by_system
        systems = {""} | ({system for _, system, _ in sessions} if per_system else set())
        for system_id in sorted(systems):
            conn.execute(
                "INSERT INTO withdrawals (study_id, system_id, count) VALUES (?,?,1)"
                " ON CONFLICT(study_id, system_id) DO UPDATE SET count = withdrawals.count + 1",
                (study_id, system_id),
            )
    conn.execute(
        "INSERT INTO erasures (study_id, digest, erased_at) VALUES (?,?,?) ON CONFLICT DO NOTHING",
        (study_id or sessions[0][2], ledger_digest(participant_id), now),
    )
    return Erased(
        study_id=study_id,
        sessions=len(ids),
        exchanges=counts.get("exchanges", 0),
        responses=counts.get("responses", 0),
        events=counts.get("events", 0),
        commands=counts.get("commands", 0),
        pending_updates=counts.get("inbox", 0),
        votes=counts.get("votes", 0),
    )


def _definition(conn: Sql, study_id: str) -> str | None:
    """The study as it ran last, as the file keeps it."""
    row = conn.execute(
        "SELECT definition FROM studies WHERE study_id = ? ORDER BY id DESC LIMIT 1", (study_id,)
    ).fetchone()
    return str(row[0]) if row is not None else None


def ledger(conn: Sql) -> list[ErasureRecord]:
    """Every erasure the file knows of, oldest first (none in a file from before the
    ledger)."""
    if not _has_ledger(conn):
        return []
    return [
        ErasureRecord(str(study), str(digest), float(at))
        for study, digest, at in conn.execute(
            "SELECT study_id, digest, erased_at FROM erasures ORDER BY erased_at, digest"
        )
    ]


def apply_ledger(
    conn: Sql,
    entries: Sequence[ErasureRecord],
    owner: Callable[[str], str | None] | None = None,
) -> tuple[int, int]:
    """Inside the caller's transaction, on a copy of a study (a backup): erase everyone
    ``entries`` names who was there before their erasure (the same pseudonym joining again
    later is a new participant, and stays), as :func:`erase_participant` does (annotators as
    ``annotator_erasure`` does); then add the ledger lines the file lacks. ``owner``: whose
    a sealed inbox payload is (needs the secret; without it pending updates stay, sealed).
    Returns (erased, lines added)."""
    erased_at: dict[tuple[str, str], list[float]] = {}
    for entry in entries:
        erased_at.setdefault((entry.study_id, entry.digest), []).append(entry.erased_at)
    before = len(ledger(conn))
    erased = 0
    for participant, study_id, joined in _present(conn):
        times = [
            at for at in erased_at.get((study_id, ledger_digest(participant)), []) if at >= joined
        ]
        if not times:
            continue
        pending = _pending_of(conn, participant, owner) if owner is not None else []
        if erase_participant(conn, participant, pending, now=min(times)) is not None:
            erased += 1
    for annotator, study_id, joined in annotator_erasure.present_annotators(conn):
        times = [
            at for at in erased_at.get((study_id, ledger_digest(annotator)), []) if at >= joined
        ]
        if times and annotator_erasure.erase_annotator(conn, annotator, now=min(times)):
            erased += 1
    conn.executemany(
        "INSERT INTO erasures (study_id, digest, erased_at) VALUES (?,?,?) ON CONFLICT DO NOTHING",
        [(e.study_id, e.digest, e.erased_at) for e in entries],
    )
    return erased, len(ledger(conn)) - before


def _present(conn: Sql) -> list[tuple[str, str, float]]:
    """(pseudonym, study, since when) of everyone the file holds rows of."""
    return [
        (str(p), str(s), float(t))
        for p, s, t in conn.execute(
            "SELECT id, study_id, created_at FROM participants"
            " UNION ALL"
            " SELECT participant_id, study_id, min(started_at) FROM sessions"
            " WHERE participant_id NOT IN (SELECT id FROM participants)"
            " GROUP BY participant_id, study_id"
        )
    ]


def _pending_of(conn: Sql, participant: str, owner: Callable[[str], str | None]) -> list[int]:
    return [
        int(update_id)
        for update_id, payload in conn.execute(
            "SELECT update_id, payload FROM inbox WHERE handled_at IS NULL AND payload IS NOT NULL"
        )
        if owner(str(payload)) == participant
    ]


def _has_ledger(conn: Sql) -> bool:
    return has_table(conn, "erasures")


def drop_chat_keys(conn: Sql) -> int:
    """Every encrypted chat id, annotators' too (a study is closed: nobody is to be written
    to again)."""
    participants = conn.execute(
        "UPDATE participants SET chat_key = NULL WHERE chat_key IS NOT NULL"
    ).rowcount
    annotators = conn.execute(
        "UPDATE annotators SET chat_key = NULL WHERE chat_key IS NOT NULL"
    ).rowcount
    return participants + annotators


def expired_participants(conn: Sql, study_id: str, before: float) -> list[str]:
    """Participants of ``study_id`` whose last activity is older than ``before``."""
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT id FROM participants WHERE study_id = ?"
            " AND coalesce(last_activity_at, updated_at) < ?",
            (study_id, before),
        )
    ]


def withdrawals(conn: Queries) -> tuple[tuple[str, str, int], ...]:
    """(study, system or '', count) for every withdrawal counted."""
    return tuple(
        (str(s), str(y), int(c))
        for s, y, c in conn.execute(
            "SELECT study_id, system_id, count FROM withdrawals ORDER BY study_id, system_id"
        )
    )


def checkpoint(conn: Sql) -> bool:
    """Move every page into the main file and empty the WAL: old page images (with the
    erased rows) live on in the WAL until then. False when a reader kept it from finishing."""
    row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return bool(row is not None and row[0] == 0)
