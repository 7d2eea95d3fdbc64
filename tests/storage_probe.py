"""What only a storage-level test may look at or do: the SQLite file under the store.

Every other test reads through the store (``tests/store_reads.py``). What is here the store
interface deliberately keeps to itself, and a test has a reason to check anyway:

- the sealed update payloads of the inbox (privacy: none is left once handled);
- the command log as the consoles wrote it (the interface gives the bot only the commands
  still to apply, and a console only the outcome of a command it holds the id of);
- SQLite's own verdict on a file (``integrity_check``), for copies and after crashes;
- whether a reader keeps the bot from checkpointing the write-ahead log, and what a reader
  sees while a write is half done;
- the schema as SQLite records it (a file written by other means must be the bot's own);
- a file stamped with a schema version of another ozlab (the store never writes one);
- the bytes of the voice notes and photos a study keeps (the store writes them with their
  step and erases them, and gives no reader the bytes).

The SQL of tests lives here and in the store's own tests (``tests/store_contract/``,
``tests/test_store.py``, ``tests/fixtures/``), and where old-schema files are built by hand.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def kept_files(db: Path) -> dict[str, bytes]:
    """Content hash -> the bytes of every file the study keeps."""
    return {
        str(digest): bytes(data)
        for digest, data in _rows(db, "SELECT digest, data FROM media_files")
    }


def sealed_payloads(db: Path) -> int:
    """How many updates the inbox still holds the sealed content of (dropped once handled)."""
    [(found,)] = _rows(db, "SELECT count(*) FROM inbox WHERE payload IS NOT NULL")
    return int(found)


def command_log(db: Path) -> list[dict[str, Any]]:
    """Every command written, applied or not, in the order written: id, wizard, kind,
    session_id, payload (decoded) and outcome (None until the bot came to it)."""
    return [
        {
            "id": command_id,
            "wizard": wizard,
            "kind": kind,
            "session_id": session_id,
            "payload": json.loads(payload),
            "outcome": outcome,
        }
        for command_id, wizard, kind, session_id, payload, outcome in _rows(
            db, "SELECT id, wizard, kind, session_id, payload, outcome FROM commands ORDER BY id"
        )
    ]


def integrity_check(db: Path) -> list[str]:
    """SQLite's verdict on the file, read-only: ``["ok"]``, or the problems it found."""
    uri = f"{db.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        return [str(row[0]) for row in conn.execute("PRAGMA integrity_check").fetchall()]


def checkpoint_blocked(db: Path) -> bool:
    """Whether a full WAL checkpoint, tried now from another connection, was held back by a
    reader (what a console that kept a transaction open would do to the bot)."""
    [(busy, _, _)] = _rows(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    return bool(busy)


def stamp_schema_version(db: Path, version: int) -> None:
    """Make ``db`` (created if missing) claim schema ``version``: a file of an older or a
    newer ozlab, as far as its header tells."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute(f"PRAGMA user_version = {int(version)}")


@contextlib.contextmanager
def session_half_written(db: Path, session_id: str, participant_id: str) -> Iterator[None]:
    """A writer in the middle of a transaction, as the bot between ``BEGIN IMMEDIATE`` and
    ``COMMIT``: a session of ``participant_id`` (task and design made up) inserted and not
    committed yet; committed on leaving (rolled back if the block fails)."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        study_id = conn.execute(
            "SELECT study_id FROM participants WHERE id = ?", (participant_id,)
        ).fetchone()[0]
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO sessions (id, participant_id, study_id, scenario_id, system_id,"
            " task_index, design, seed, state, started_at)"
            " VALUES (?, ?, ?, 'find-gift', 'system-a', 1, 'balanced', '2', 'dialogue', 9000)",
            (session_id, participant_id, study_id),
        )
        yield
        conn.execute("COMMIT")


def schema(db: Path) -> tuple[int, list[tuple[Any, ...]]]:
    """The schema version and every table and index as SQLite records them, by name."""
    version = _rows(db, "PRAGMA user_version")[0][0]
    return int(version), _rows(db, "SELECT type, name, sql FROM sqlite_master ORDER BY name")


@contextlib.contextmanager
def updates_cannot_be_consumed(db: Path) -> Iterator[None]:
    """Every transaction that marks a Telegram update handled fails, as if the process died
    at that write: what a step wrote with it must go too. Lifted on leaving."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute(
            "CREATE TRIGGER probe_unconsumable BEFORE UPDATE OF handled_at ON inbox"
            " WHEN NEW.handled_at IS NOT NULL BEGIN SELECT RAISE(ABORT, 'probe'); END"
        )
        try:
            yield
        finally:
            conn.execute("DROP TRIGGER probe_unconsumable")


def pending_update_ids(db: Path) -> list[int]:
    """The updates the inbox holds and the bot has not handled yet."""
    rows = _rows(db, "SELECT update_id FROM inbox WHERE handled_at IS NULL ORDER BY update_id")
    return [int(update_id) for (update_id,) in rows]
