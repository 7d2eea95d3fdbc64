"""The SQLite backend of the study store: one file, the single source of truth.

Writes go through one writer task that commits the jobs waiting at that moment together
(group commit): each caller still returns only once its rows are durable, and two hundred
participants cost a handful of transactions instead of two hundred. The writer and the
reader are each an aiosqlite connection, a thread of its own: a batch runs as one call on
the writer's thread (a call per statement cost a thread round trip each and halved the
bot's throughput, bench/), and each read as one call on the reader's, inside one short read
transaction, fetched in full.

Open with :func:`open_store` (the bot, importers: creates and upgrades the file) or
:func:`open_existing` (the console: the file must be at this ozlab's schema; analytics:
``read_only``, any older schema, never written). Both announce that this process has the file
open (``bot.store.lock``: a demo never replaces a file someone reads) until :meth:`close`.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import aiosqlite

from bot.core.errors import StoreError
from bot.store import (
    erasure,
)
from bot.store import lock as running
from bot.store.backup import take_backup
from bot.store.connection import (
    SCHEMA_VERSION,
    connect,
    migrate,
    schema_version,
    too_new,
    too_old,
)
from bot.store.model import (
    SnapshotInfo,
    SnapshotSink,
)
from bot.store.relational import Job, RelationalStore
from bot.store.snapshot import read_snapshot
from bot.store.sql import Sql
from bot.store.transaction import Tx

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

T = TypeVar("T")


async def open_store(
    path: str | Path, clock: Callable[[], float] = time.time, *, synchronous: str = "NORMAL"
) -> SqliteStore:
    """The store the bot runs on: the file is created or upgraded first."""
    # the file is made 0600 here
    presence = await asyncio.to_thread(running.announce, path, create=True)
    writer: aiosqlite.Connection | None = None
    try:
        writer = await _connection(lambda: _migrated(path, synchronous))
        reader = await _connection(lambda: connect(path, synchronous=synchronous))
    except BaseException:
        if writer is not None:
            await writer.close()
        presence.release()
        raise
    return SqliteStore(path, reader, writer, clock, presence)


async def open_existing(
    path: str | Path, clock: Callable[[], float] = time.time, *, read_only: bool = False
) -> SqliteStore:
    """A store on a file the bot made, never upgraded here. Writable (the console's
    commands): the schema must be this ozlab's. ``read_only`` (analytics): any schema up
    to this ozlab's, and nothing is written."""

    def announced() -> running.Presence:
        if not Path(path).is_file():
            raise StoreError(f"no study database at {path}: give the --db the bot runs with")
        return running.announce(path)

    presence = await asyncio.to_thread(announced)
    reader: aiosqlite.Connection | None = None
    try:
        reader = await _connection(lambda: connect(path, read_only=read_only))
        version = await _on(reader, schema_version)
        if version > SCHEMA_VERSION or (not read_only and version < SCHEMA_VERSION):
            raise too_new(version, path) if version > SCHEMA_VERSION else too_old(version, path)
        writer = None if read_only else await _connection(lambda: connect(path))
    except BaseException:
        if reader is not None:
            await reader.close()
        presence.release()
        raise
    return SqliteStore(path, reader, writer, clock, presence)


def _migrated(path: str | Path, synchronous: str) -> sqlite3.Connection:
    """The writer's connection, the schema brought up to date on it first."""
    conn = connect(path, synchronous=synchronous)
    try:
        migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


async def _connection(connector: Callable[[], sqlite3.Connection]) -> aiosqlite.Connection:
    """An aiosqlite connection whose thread opens the file the ozlab way (``connect``).

    A file that cannot be opened is raised here, after the connection's thread has
    stopped: aiosqlite's own path for a failed open asks its thread to stop without
    waiting, and when the event loop closes first (a command ending on that very error),
    the thread's answer meets a closed loop and is lost as an exception in the thread."""
    failed: list[Exception] = []

    def opened() -> sqlite3.Connection:
        try:
            return connector()
        except Exception as error:
            failed.append(error)
            return sqlite3.connect(":memory:")  # closed at once below, with its thread

    conn = await aiosqlite.Connection(opened, iter_chunk_size=64)
    if failed:
        await conn.close()
        raise failed[0]
    return conn


async def _on(conn: aiosqlite.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work`` on the connection's own thread, in one hop however many statements it runs:
    a hop per statement (aiosqlite's ``execute``) halves the bot's throughput (bench/).
    ``_execute`` is the one call aiosqlite offers for a function of ours on its thread."""

    def call() -> T:
        return work(conn._conn)

    on_its_thread: Callable[[Callable[[], T]], Awaitable[T]] = conn._execute
    return await on_its_thread(call)


def is_study_database(path: str | Path) -> bool:
    """Whether ``path`` is a file ozlab made (tables of a study), read without writing."""
    try:
        conn = connect(path, read_only=True)
    except StoreError:
        return False
    try:
        found = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'participants'"
        ).fetchone()
        return bool(found and found[0])
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


class SqliteStore(RelationalStore):
    """:class:`bot.store.interface.StudyStore` on one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        reader: aiosqlite.Connection,
        writer: aiosqlite.Connection | None,
        clock: Callable[[], float],
        presence: running.Presence | None = None,
    ) -> None:
        super().__init__(str(path), clock, writable=writer is not None)
        self._presence = presence
        self._reader = reader
        self._writer_conn = writer

    async def _close_connections(self) -> None:
        if self._writer_conn is not None:
            await self._writer_conn.close()
        await self._reader.close()
        if self._presence is not None:  # only now: see bot.store.lock on SQLite's own locks
            self._presence.release()

    async def _commit(self, jobs: list[Job]) -> list[Any]:
        """The batch as one call on the writer's thread, in one transaction."""
        assert self._writer_conn is not None
        return await _on(self._writer_conn, lambda conn: _run(conn, jobs))

    async def _read(self, query: Callable[[Sql], T]) -> T:
        """``query`` inside one short read transaction on the reader's own thread."""
        return await _on(self._reader, lambda conn: _in_snapshot(conn, query))

    async def changes(self) -> int:
        """A number that differs whenever someone else committed since it was last read."""

        def query(conn: sqlite3.Connection) -> int:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

        return await _on(self._reader, query)

    async def read_snapshot(self, sink: SnapshotSink) -> SnapshotInfo:
        """Every table analytics reads, from one consistent snapshot, as Arrow tables."""
        return await _on(self._reader, lambda conn: read_snapshot(conn, self.path, sink))

    async def _after_erasure(self) -> None:
        """Secure delete overwrote the rows in the file; the WAL still holds old page
        images until it is checkpointed, on a connection of its own (the writer's is only
        ever used inside a transaction)."""

        def run() -> None:
            conn = connect(self.path)
            try:
                if not erasure.checkpoint(conn):
                    log.warning("a reader kept the WAL from being emptied after an erasure")
            finally:
                conn.close()

        await asyncio.to_thread(run)

    async def backup(self, target: Path) -> None:
        """A consistent copy through SQLite's online backup API (``bot.store.backup``), on
        the reader's connection: the bot's writer is never held up."""
        await _on(self._reader, lambda conn: take_backup(conn, self.path, target))


def _run(conn: sqlite3.Connection, jobs: list[Job]) -> list[Any]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        tx = Tx(conn)
        results = [job(tx) for job in jobs]
        tx.finish()
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return results


def _in_snapshot(conn: sqlite3.Connection, query: Callable[[Sql], T]) -> T:
    conn.execute("BEGIN")
    try:
        return query(conn)
    finally:
        conn.execute("COMMIT")


if TYPE_CHECKING:
    from bot.store.interface import StudyStore

    _: type[StudyStore] = SqliteStore  # the backend implements the whole interface
