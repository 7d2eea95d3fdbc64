"""One consistent read of a whole study for analytics, in chunks.

Everything is read inside one read transaction on a read-only connection: the tables agree
with each other, the file is never written, and rows go to the sink a chunk at a time so
that a million answers never sit in memory as Python tuples all at once. A file of an older
schema is copied into memory and upgraded there by the same migrations the bot runs, so
analytics reads one shape of data and no rule exists twice.
"""

from __future__ import annotations

import sqlite3

from bot.store.annotating import annotation_jobs
from bot.store.annotation_ratings import ratings
from bot.store.connection import SCHEMA_VERSION, migrate, schema_version, too_new
from bot.store.erasure import withdrawals
from bot.store.model import SNAPSHOT_COLUMNS, SnapshotInfo, SnapshotSink
from bot.store.sql import Sql

CHUNK = 200_000

_ID = {
    "sessions": "session_id",
    "exchanges": "exchange_id",
    "responses": "response_id",
    "events": "event_id",
    "participants": "participant_id",
    "commands": "command_id",
}
_ORDER = {
    "sessions": "started_at, id",
    "exchanges": "session_id, turn",
    "responses": "id",
    "events": "id",
    "participants": "created_at, id",
    "commands": "id",
}


def read_snapshot(conn: sqlite3.Connection, path: str, sink: SnapshotSink) -> SnapshotInfo:
    """Call ``sink`` with every chunk of every snapshot table; ``conn`` is read-only."""
    conn.execute("BEGIN")
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise too_new(version, path)
        has_tables = bool(
            conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"
            ).fetchone()[0]
        )
        if version == SCHEMA_VERSION:
            return read_tables(conn, sink, version, has_tables)
        upgraded = sqlite3.connect(":memory:", isolation_level=None)
    finally:
        conn.execute("COMMIT")
    try:
        conn.backup(upgraded)
        migrate(upgraded, path)
        upgraded.execute("BEGIN")
        return read_tables(upgraded, sink, version, has_tables)
    finally:
        upgraded.close()


def read_tables(conn: Sql, sink: SnapshotSink, version: int, has_tables: bool) -> SnapshotInfo:
    """The snapshot's tables, read on ``conn`` inside the caller's read transaction."""
    for table, columns in SNAPSHOT_COLUMNS.items():
        selected = ", ".join("id" if c == _ID[table] else c for c in columns)
        cursor = conn.execute(f"SELECT {selected} FROM {table} ORDER BY {_ORDER[table]}")
        try:
            while rows := cursor.fetchmany(CHUNK):
                sink(table, rows)
        finally:
            cursor.close()
    definitions = conn.execute("SELECT study_id, definition FROM studies ORDER BY id").fetchall()
    annotations = tuple(ratings(conn))
    jobs = tuple(annotation_jobs(conn))
    return SnapshotInfo(
        version, has_tables, tuple(definitions), withdrawals(conn), annotations, jobs
    )
