"""The study database: one SQLite file, the single source of truth.

Writes go through one writer task that commits the jobs waiting at that moment together
(group commit): each caller still returns only once its rows are durable, and two hundred
participants cost a handful of transactions instead of two hundred. A batch runs in one
hop to a worker thread on the writer's own connection: going through aiosqlite statement
by statement cost a thread round trip each and halved the bot's throughput (bench/).
Reads go through aiosqlite.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from bot.engine import effects as fx
from bot.store.schema import MIGRATIONS

log = logging.getLogger(__name__)

Job = Callable[[sqlite3.Connection], Any]
"""A write: plain, synchronous SQL on the writer's connection, inside its transaction."""


@dataclass(frozen=True)
class StoredParticipant:
    participant_id: str
    chat_key: str | None
    state: str
    undelivered: str | None


def pragmas(synchronous: str = "NORMAL") -> tuple[str, ...]:
    """How every ozlab connection uses the file: WAL, waiting for locks, keys enforced."""
    return (
        "journal_mode=WAL",
        f"synchronous={synchronous}",
        "busy_timeout=10000",
        "foreign_keys=ON",
    )


async def connect(path: str | Path, *, synchronous: str = "NORMAL") -> aiosqlite.Connection:
    """A connection set up the way every ozlab process must use the file (WAL, autocommit)."""
    conn = await aiosqlite.connect(str(path), isolation_level=None)
    for pragma in pragmas(synchronous):
        await conn.execute(f"PRAGMA {pragma}")
    return conn


async def migrate(conn: aiosqlite.Connection) -> int:
    """Bring the schema up to date; returns the version. Safe to run from several processes."""
    await conn.execute("BEGIN IMMEDIATE")
    try:
        async with conn.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        version = row[0] if row else 0
        if version > len(MIGRATIONS):
            raise RuntimeError(
                f"the database has schema version {version}, newer than this ozlab "
                f"({len(MIGRATIONS)}): upgrade ozlab"
            )
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in _statements(script):
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version={number}")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """Split a script into statements (semicolons inside comments do not count)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _writer_connection(path: str | Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    for pragma in (
        "journal_mode=WAL",
        f"synchronous={synchronous}",
        "busy_timeout=10000",
        "foreign_keys=ON",
    ):
        conn.execute(f"PRAGMA {pragma}")
    return conn


class Store:
    def __init__(
        self, conn: aiosqlite.Connection, writer: sqlite3.Connection, clock: Callable[[], float]
    ) -> None:
        self._conn = conn
        self._writer_conn = writer
        self._clock = clock
        self._jobs: asyncio.Queue[tuple[Job, asyncio.Future[Any]] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls, path: str | Path, clock: Callable[[], float], *, synchronous: str = "NORMAL"
    ) -> Store:
        conn = await connect(path, synchronous=synchronous)
        try:
            await migrate(conn)
        except BaseException:
            await conn.close()
            raise
        writer = await asyncio.to_thread(_writer_connection, path, synchronous)
        store = cls(conn, writer, clock)
        store._writer = asyncio.create_task(store._write_loop(), name="ozlab-store-writer")
        return store

    async def close(self) -> None:
        """Finish the writes already asked for, then close."""
        if self._writer is not None and not self._writer.done():
            await self._jobs.put(None)
            await self._writer
        await asyncio.to_thread(self._writer_conn.close)
        await self._conn.close()

    # --- the writer ----------------------------------------------------------------

    def delivered(self, participant_id: str) -> None:
        """The messages of the last step went out. Not awaited: if the bot dies first, they
        are sent once more at start-up (at least once, never lost)."""

        def job(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE participants SET undelivered = NULL WHERE id = ?", (participant_id,)
            )

        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._jobs.put_nowait((job, future))

    async def write(self, job: Job) -> Any:
        """Run ``job`` inside a committed transaction; returns once it is durable."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._jobs.put((job, future))
        return await future

    async def _write_loop(self) -> None:
        closing = False
        while not closing:
            first = await self._jobs.get()
            if first is None:
                return
            batch = [first]
            while not self._jobs.empty() and len(batch) < 500:
                job = self._jobs.get_nowait()
                if job is None:
                    closing = True
                    break
                batch.append(job)
            try:
                results = await self._transaction([job for job, _ in batch])
            except Exception:
                # One bad job must not sink the others: run each alone to isolate it.
                for job, future in batch:
                    try:
                        (result,) = await self._transaction([job])
                    except Exception as error:
                        log.exception("a database write failed")
                        if not future.done():
                            future.set_exception(error)
                    else:
                        if not future.done():
                            future.set_result(result)
                continue
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def _transaction(self, jobs: list[Job]) -> list[Any]:
        return await asyncio.to_thread(self._run, jobs)

    def _run(self, jobs: list[Job]) -> list[Any]:
        conn = self._writer_conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            results = [job(conn) for job in jobs]
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return results

    async def _fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        async with self._conn.execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    # --- the study definition -------------------------------------------------------

    async def record_definition(self, study_id: str, definition: str) -> bool:
        """Keep the study as it ran; a new row only when the definition changed (True)."""
        digest = hashlib.sha256(definition.encode()).hexdigest()
        now = self._clock()

        def job(conn: sqlite3.Connection) -> bool:
            latest = conn.execute(
                "SELECT digest FROM studies WHERE study_id = ? ORDER BY id DESC LIMIT 1",
                (study_id,),
            ).fetchone()
            if latest is not None and latest[0] == digest:
                return False
            conn.execute(
                "INSERT INTO studies (study_id, loaded_at, definition, digest) VALUES (?,?,?,?)",
                (study_id, now, definition, digest),
            )
            return True

        return await self.write(job)

    # --- the wizard console's commands ------------------------------------------------

    async def pending_commands(self, after: int) -> list[tuple[int, str, str, str | None, str]]:
        """Commands not applied yet: (id, kind, wizard, session id, payload JSON)."""
        return await self._fetchall(
            "SELECT id, kind, wizard, session_id, payload FROM commands"
            " WHERE applied_at IS NULL AND id > ? ORDER BY id",
            (after,),
        )

    async def gates(self) -> dict[str, tuple[bool, float | None]]:
        rows = await self._fetchall("SELECT scope, gated, auto_send_after FROM gates")
        return {scope: (bool(gated), auto) for scope, gated, auto in rows}

    async def settle_command(self, records: list[fx.Record]) -> None:
        """Apply records that belong to no participant (a gate on a system or the study)."""

        def job(conn: sqlite3.Connection) -> None:
            for record in records:
                _apply(conn, "", "", record, self._clock())

        await self.write(job)

    # --- the inbox: updates are durable before Telegram is told we have them ---------

    async def remember_updates(self, updates: list[tuple[int, str]]) -> set[int]:
        """Store sealed updates; returns the ids that were new (a redelivery is not)."""
        now = self._clock()

        def job(conn: sqlite3.Connection) -> set[int]:
            new: set[int] = set()
            for update_id, payload in updates:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO inbox (update_id, received_at, payload) VALUES (?,?,?)",
                    (update_id, now, payload),
                )
                if cursor.rowcount:
                    new.add(update_id)
            return new

        return await self.write(job)

    async def pending_updates(self) -> list[tuple[int, str]]:
        return await self._fetchall(
            "SELECT update_id, payload FROM inbox WHERE handled_at IS NULL ORDER BY update_id"
        )

    # --- participants and what the engine produced ----------------------------------

    async def load_participants(self, study_id: str) -> list[StoredParticipant]:
        rows = await self._fetchall(
            "SELECT id, chat_key, state, undelivered FROM participants WHERE study_id = ?",
            (study_id,),
        )
        return [StoredParticipant(*row) for row in rows]

    async def commit_step(
        self,
        *,
        study_id: str,
        participant_id: str,
        state: str | None,
        chat_key: str | None,
        records: list[fx.Record],
        update_id: int | None,
        undelivered: str | None = None,
    ) -> None:
        """Commit one engine step: the new state, its rows, the update it consumed, and the
        messages it is about to send (until ``delivered`` says they went out)."""
        now = self._clock()

        def job(conn: sqlite3.Connection) -> None:
            if state is not None:
                conn.execute(
                    "INSERT INTO participants (id, study_id, chat_key, created_at, updated_at,"
                    " state, undelivered) VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET"
                    " state = excluded.state, updated_at = excluded.updated_at,"
                    " undelivered = excluded.undelivered,"
                    " chat_key = COALESCE(participants.chat_key, excluded.chat_key)",
                    (participant_id, study_id, chat_key, now, now, state, undelivered),
                )
            for record in records:
                _apply(conn, study_id, participant_id, record, now)
            if update_id is not None:
                conn.execute(
                    "UPDATE inbox SET handled_at = ?, payload = NULL WHERE update_id = ?",
                    (now, update_id),
                )

        await self.write(job)


def _apply(
    conn: sqlite3.Connection, study_id: str, participant_id: str, record: fx.Record, now: float
) -> None:
    match record:
        case fx.RecordConsent(decision=decision):
            conn.execute(
                "UPDATE participants SET consent = ?, consent_at = ? WHERE id = ?",
                (decision, now, participant_id),
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
            conn.execute("UPDATE sessions SET state = ? WHERE id = ?", (state, session_id))
        case fx.CloseSession(session_id=session_id, reason=reason, success=success):
            conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?, success = ? WHERE id = ?",
                (now, reason, int(success), session_id),
            )
        case fx.RecordUserTurn(session_id=session_id, turn=turn, text=text):
            conn.execute(
                "INSERT INTO exchanges (session_id, turn, user_text, user_at) VALUES (?,?,?,?)",
                (session_id, turn, text, now),
            )
        case fx.RecordSystemTurn():
            conn.execute(
                "UPDATE exchanges SET system_text = ?, system_at = ?, latency_ms = ?, error = ?,"
                " source = ?, original_text = ?, wizard = ? WHERE session_id = ? AND turn = ?",
                (
                    record.text,
                    now,
                    round(record.latency_ms, 3),
                    record.error,
                    record.source if record.text is not None else None,
                    record.original_text,
                    record.wizard,
                    record.session_id,
                    record.turn,
                ),
            )
        case fx.SetSuccess(session_id=session_id, success=success):
            conn.execute("UPDATE sessions SET success = ? WHERE id = ?", (int(success), session_id))
        case fx.RecordCommand(command_id=command_id, outcome=outcome):
            conn.execute(
                "UPDATE commands SET applied_at = ?, outcome = ?"
                " WHERE id = ? AND applied_at IS NULL",
                (now, outcome, command_id),
            )
        case fx.RecordGate(scope=scope, gated=gated, auto_send_after=auto, wizard=wizard):
            conn.execute(
                "INSERT INTO gates (scope, gated, auto_send_after, wizard, set_at)"
                " VALUES (?,?,?,?,?) ON CONFLICT(scope) DO UPDATE SET gated = excluded.gated,"
                " auto_send_after = excluded.auto_send_after, wizard = excluded.wizard,"
                " set_at = excluded.set_at",
                (scope, int(gated), auto, wizard, now),
            )
        case fx.RecordResponse():
            conn.execute(
                "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id,"
                " item_id, value, label, text, status, shown_at, answered_at, turn, stimulus_id,"
                " attention_ok) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    participant_id,
                    record.session_id,
                    record.scope or record.session_id or "study",
                    record.questionnaire_id,
                    record.item_id,
                    record.value,
                    record.label,
                    record.text,
                    record.status,
                    record.shown_at,
                    now,
                    record.turn,
                    record.stimulus_id,
                    None if record.attention_ok is None else int(record.attention_ok),
                ),
            )
        case fx.RecordEvent(kind=kind, session_id=session_id, data=data):
            conn.execute(
                "INSERT INTO events (at, participant_id, session_id, kind, data)"
                " VALUES (?,?,?,?,?)",
                (now, participant_id, session_id, kind, json.dumps(data)),
            )
