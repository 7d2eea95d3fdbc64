"""Erasures carried into backups: a backup is a study database of its own, and a participant
who withdrew after it was taken is erased from it by the same transaction as from the live
file (``bot.store.erasure``), with the time the live ledger keeps.

A backup stays what ``ozlab backup`` wrote: one self-contained file with a rollback journal
(never switched to WAL), erased with ``secure_delete`` and then vacuumed, so that no page of
the file keeps the erased words. A backup from an older ozlab is brought up to this schema
first; one from a newer ozlab, or one that is open, is refused before anything is written.
A file with nothing to erase is not written at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.core.errors import StoreError
from bot.store.connection import BUSY_TIMEOUT_MS, SCHEMA_VERSION, migrate, schema_version, too_new
from bot.store.erasure import apply_ledger, ledger
from bot.store.model import BackupErased, ErasureRecord

_HEADER = b"SQLite format 3\x00"
_PRAGMAS = (f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON", "secure_delete=ON")
"""As the live file's connections, but the journal left a plain rollback journal."""

Owner = Callable[[str], str | None]
"""Whose a sealed inbox payload is (a pseudonym), for the holder of the study's secret."""


def is_database(path: Path) -> bool:
    """An SQLite file (a compressed or encrypted backup is not: it cannot be erased here)."""
    try:
        with path.open("rb") as file:
            return file.read(len(_HEADER)) == _HEADER
    except OSError:
        return False


def check_backup(path: Path) -> int:
    """The backup's schema version; raises (one line) when it cannot be erased as it is."""
    conn = _open(path)
    try:
        return _version(conn, path)
    finally:
        conn.close()


def erase_in_backup(
    path: Path, entries: Sequence[ErasureRecord], owner: Owner | None = None
) -> BackupErased:
    """Apply every erasure of ``entries`` to the backup at ``path``, in place."""
    conn = _open(path)
    try:
        version = _version(conn, path)
        conn.execute("PRAGMA journal_mode=DELETE")  # one file, as ozlab backup wrote it
        if version < SCHEMA_VERSION:
            migrate(conn, path)
        erased, recorded = _apply(conn, entries, owner)
        if erased:
            conn.execute("VACUUM")  # every page written anew: no free page keeps a word
        _check(conn, path)
        return BackupErased(erased, recorded, version if version < SCHEMA_VERSION else None)
    except sqlite3.Error as error:
        raise StoreError(f"cannot erase in the backup {path}: {error}") from error
    finally:
        conn.close()


def erase_in_copy(copy: sqlite3.Connection) -> int:
    """A fresh copy of the live file (``ozlab backup``, before it is renamed into place)
    erased of everyone its own ledger names; how many. A copy from before the ledger is left
    as it is."""
    for pragma in _PRAGMAS:
        copy.execute(f"PRAGMA {pragma}")
    entries = ledger(copy)
    if not entries:
        return 0
    erased, _ = _apply(copy, entries, None)
    if erased:
        copy.execute("VACUUM")
    return erased


def _apply(
    conn: sqlite3.Connection, entries: Sequence[ErasureRecord], owner: Owner | None
) -> tuple[int, int]:
    """One transaction; rolled back (the file untouched) when it changed nothing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        erased, recorded = apply_ledger(conn, entries, owner)
        conn.execute("COMMIT" if erased or recorded else "ROLLBACK")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return erased, recorded


def _open(path: Path) -> sqlite3.Connection:
    for suffix in ("-wal", "-journal"):
        beside = path.with_name(path.name + suffix)
        if beside.exists():
            raise StoreError(
                f"cannot erase in the backup {path}: {beside} is beside it (the file is open,"
                " or was not closed cleanly); close it and run this again"
            )
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        for pragma in _PRAGMAS:
            conn.execute(f"PRAGMA {pragma}")
    except sqlite3.Error as error:
        raise StoreError(f"cannot open the backup {path}: {error}") from error
    return conn


def _version(conn: sqlite3.Connection, path: Path) -> int:
    try:
        version = schema_version(conn)
        tables = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'participants'"
        ).fetchone()
    except sqlite3.Error as error:
        raise StoreError(f"{path} is not a study database ({error})") from error
    if version > SCHEMA_VERSION:
        raise too_new(version, path)
    if version == 0 or tables is None:
        raise StoreError(f"{path} is an SQLite file but not a study database: move it elsewhere")
    return version


def _check(conn: sqlite3.Connection, path: Path) -> None:
    found = [str(row[0]) for row in conn.execute("PRAGMA integrity_check").fetchall()]
    if found != ["ok"]:
        raise StoreError(
            f"the backup {path} failed SQLite's integrity check ({'; '.join(found[:3])})"
        )
