"""How every ozlab process opens the study file, and how its schema is brought up to date.

The pragmas are listed once, here: WAL (the bot writes while consoles and analytics read),
a busy timeout (a second writer waits instead of failing), foreign keys enforced. Writes
start with ``BEGIN IMMEDIATE``: a deferred transaction that reads first and then writes
fails with "database is locked" beside a busy bot.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.core.errors import SchemaError, StoreError
from bot.core.researcher_files import private_database
from bot.store.schema import MIGRATIONS
from bot.store.sql import Queries

SCHEMA_VERSION = len(MIGRATIONS)
BUSY_TIMEOUT_MS = 10_000


def pragmas(synchronous: str = "NORMAL", *, read_only: bool = False) -> tuple[str, ...]:
    """How a connection uses the file (a read-only one leaves the journal mode alone: it
    cannot change it, and a file in WAL mode stays so)."""
    if read_only:
        return (f"busy_timeout={BUSY_TIMEOUT_MS}", "query_only=ON")
    return (
        "journal_mode=WAL",
        f"synchronous={synchronous}",
        f"busy_timeout={BUSY_TIMEOUT_MS}",
        "foreign_keys=ON",
        "secure_delete=ON",  # an erased participant's rows are overwritten, not just unlinked
    )


def connect(
    path: str | Path, *, synchronous: str = "NORMAL", read_only: bool = False
) -> sqlite3.Connection:
    """An autocommit connection set up the ozlab way, usable from one thread at a time."""
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise StoreError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
    target = f"{Path(path).resolve().as_uri()}?mode=ro" if read_only else str(path)
    try:
        if not read_only and target != ":memory:":
            private_database(path)  # owner-only, as every file with participants' data
        conn = sqlite3.connect(target, uri=read_only, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as error:
        raise StoreError(f"cannot open the study database {path}: {error}") from error
    except OSError as error:
        raise StoreError(f"cannot open the study database {path}: {error.strerror}") from error
    try:
        for pragma in pragmas(synchronous, read_only=read_only):
            conn.execute(f"PRAGMA {pragma}")
        schema_version(conn)  # reads the header: a file that is not a database fails here
    except sqlite3.DatabaseError as error:
        conn.close()
        raise StoreError(f"{path} is not a study database ({error})") from error
    return conn


def schema_version(conn: Queries) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def too_new(version: int, path: str | Path) -> SchemaError:
    return SchemaError(
        f"{path} has schema version {version}, newer than this ozlab ({SCHEMA_VERSION}):"
        " upgrade ozlab"
    )


def too_old(version: int, path: str | Path) -> SchemaError:
    return SchemaError(
        f"{path} has schema version {version}; this ozlab needs {SCHEMA_VERSION}:"
        " start the bot (ozlab run) once on it to upgrade it"
    )


def migrate(conn: sqlite3.Connection, path: str | Path = "the database") -> int:
    """Bring the schema up to date in one transaction; safe from several processes at once
    (the second waits for the lock, then finds nothing to do). Returns the version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise too_new(version, path)
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            for statement in statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={number}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def statements(script: str) -> list[str]:
    """Split a script into statements (semicolons inside comments do not count)."""
    found, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            found.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        found.append(buffer.strip())
    return found
