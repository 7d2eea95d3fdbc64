"""The PostgreSQL backend of the study store: one study is one schema of a lab's database.

It is :class:`bot.store.relational.RelationalStore`, as the SQLite backend is: the same
statements, the same group commit. What is its own:

- Each connection (the writer, the reader) is a psycopg connection used from one thread of
  its own, as SQLite's are: the store's statements are synchronous functions, run in one hop
  per batch or read.
- A write transaction starts by counting itself in ``store_version.revision``: the row lock
  that takes serialises the study's writers as SQLite's ``BEGIN IMMEDIATE`` does (the line
  sequence is read and written back in each), and the count is the console's ``changes``.
- A read is one ``REPEATABLE READ, READ ONLY`` transaction: its statements see one snapshot.
- Every store holds a shared advisory lock on its study for as long as it is open (presence:
  a demo replaces only a study nobody has open), as the SQLite backend's ``flock`` does.
- An erasure deletes the rows, then ``VACUUM FULL`` rewrites the study's tables: PostgreSQL
  leaves deleted rows in the table's files until their space is reused, and a rewrite into
  new files (the old ones are truncated when it commits) is the way its documentation gives
  to give the space, and the words in it, back at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from bot.core.errors import StoreError, StoreUnreachable
from bot.store.model import SnapshotInfo, SnapshotSink
from bot.store.opening import shown_url
from bot.store.postgres import connection as pg
from bot.store.postgres import snapshot
from bot.store.postgres.lock import let_go
from bot.store.relational import Job, RelationalStore
from bot.store.sql import Sql
from bot.store.transaction import Tx

T = TypeVar("T")


class _Line:
    """One psycopg connection and the one thread that uses it."""

    def __init__(self, conn: psycopg.Connection[Any], thread: ThreadPoolExecutor) -> None:
        self.conn = conn
        self._thread = thread
        self.gone: Callable[[BaseException], Exception] = StoreUnreachable
        """What is raised when the connection is lost (the store sets its own)."""

    @classmethod
    async def open(cls, name: str, connector: Callable[[], psycopg.Connection[Any]]) -> _Line:
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        try:
            conn = await asyncio.get_running_loop().run_in_executor(
                thread, pg.within_rights, connector
            )
        except psycopg.OperationalError as error:  # the server went away while it opened
            thread.shutdown(wait=False)
            raise pg.refused(error) from None
        except BaseException:
            thread.shutdown(wait=False)
            raise
        return cls(conn, thread)

    async def run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._thread, pg.within_rights, lambda: work(self.conn)
            )
        except psycopg.Error as error:
            if pg.lost(self.conn, error):
                raise self.gone(error) from None
            raise

    async def close(self) -> None:
        try:
            await self.run(let_go)  # presence let go before the next command looks
        finally:
            self._thread.shutdown(wait=True)


async def open_store(
    url: str, study: str, clock: Callable[[], float] = time.time, *, create: bool = True
) -> PostgresStore:
    """The store the bot runs on: the study's schema is created (``create``) or brought up
    to date first."""
    schema = pg.study_schema(study)
    shown = shown_study(url, schema)

    def migrated() -> psycopg.Connection[Any]:
        conn = pg.connect(url, None)
        try:
            if not create and pg.schema_version(conn, schema) is None:
                raise StoreError(
                    f"no study {schema!r} at {shown}: name the study the bot ran"
                    " (?study= in the URL)"
                )
            pg.migrate(conn, schema, shown)
            conn.execute(f"SET search_path TO {pg.quoted(schema)}")
        except BaseException:
            conn.close()
            raise
        return conn

    writer = await _Line.open("ozlab-pg-writer", migrated)
    try:
        reader = await _reader(url, schema, shown)
    except BaseException:
        await writer.close()
        raise
    return PostgresStore(url, schema, reader, writer, clock)


async def open_existing(
    url: str, study: str, clock: Callable[[], float] = time.time, *, read_only: bool = False
) -> PostgresStore:
    """A store on a study the bot made, never upgraded here (see ``bot.store.sqlite``)."""
    schema = pg.study_schema(study)
    shown = shown_study(url, schema)
    reader = await _reader(url, schema, shown)
    try:
        version = await reader.run(lambda conn: pg.schema_version(conn, schema))
        if version is None:
            raise StoreError(
                f"no study {schema!r} at {shown}: name the study the bot ran (?study= in the URL)"
            )
        if version > pg.SCHEMA_VERSION:
            raise pg.too_new(version, shown)
        if not read_only and version < pg.SCHEMA_VERSION:
            raise pg.too_old(version, shown)
        writer = (
            None
            if read_only
            else await _Line.open("ozlab-pg-writer", lambda: pg.connect(url, schema))
        )
    except BaseException:
        await reader.close()
        raise
    return PostgresStore(url, schema, reader, writer, clock)


async def _reader(url: str, schema: str, shown: str) -> _Line:
    def connected() -> psycopg.Connection[Any]:
        conn = pg.connect(url, schema)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        # presence: held until this connection closes, whatever ends the process
        conn.execute("SELECT pg_advisory_lock_shared(%s)", (pg.lock_key("presence", schema),))
        return conn

    return await _Line.open("ozlab-pg-reader", connected)


def shown_study(url: str, schema: str) -> str:
    """The study as a line may name it: the URL without a password, and the study."""
    return f"{shown_url(url)} (study {schema})"


def studies(url: str) -> list[str]:
    """The studies a PostgreSQL database keeps."""
    conn = pg.connect(url, None)
    try:
        return pg.studies_in(conn)
    finally:
        conn.close()


def only_study(url: str, *, creating: bool = False) -> str:
    """The one study a database keeps, when no study was named."""
    found = studies(url)
    if len(found) == 1:
        return found[0]
    shown = shown_url(url)
    if not found and creating:
        raise StoreError(f"{shown}: name the study to create there (?study= in the URL)")
    if not found:
        raise StoreError(f"no study in {shown}: give the --db the bot ran with")
    listed = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
    raise StoreError(
        f"{shown} keeps studies {listed}: say which with ?study= in the URL (or --study)"
    )


class PostgresStore(RelationalStore):
    """:class:`bot.store.interface.StudyStore` on one study's schema of a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        schema: str,
        reader: _Line,
        writer: _Line | None,
        clock: Callable[[], float],
    ) -> None:
        super().__init__(shown_study(url, schema), clock, writable=writer is not None)
        self.url = url
        self.study = schema
        self._reader = reader
        self._writer_line = writer
        for line in (reader, writer):
            if line is not None:
                line.gone = self._connection_lost
        self._prepared: dict[str, str] = {}
        """The writer connection's prepared statements, by their text (``BatchedSql``)."""
        self._known = _Known()

    async def _close_connections(self) -> None:
        if self._writer_line is not None:
            await self._writer_line.close()
        await self._reader.close()

    async def _commit(self, jobs: list[Job]) -> list[Any]:
        assert self._writer_line is not None
        prepared, known = self._prepared, self._known
        return await self._writer_line.run(lambda conn: _run(conn, jobs, prepared, known))

    async def _read(self, query: Callable[[Sql], T]) -> T:
        def read(conn: psycopg.Connection[Any]) -> T:
            with conn.transaction():
                return query(pg.PostgresSql(conn))

        return await self._reader.run(read)

    async def changes(self) -> int:
        def query(conn: psycopg.Connection[Any]) -> int:
            with conn.transaction():
                row = conn.execute("SELECT revision FROM store_version").fetchone()
            return int(row[0]) if row else 0

        return await self._reader.run(query)

    async def read_snapshot(self, sink: SnapshotSink) -> SnapshotInfo:
        """Read columnar on a connection of its own (``bot.store.postgres.snapshot``), on
        the reader's thread: the event loop is never held up by a large study."""
        return await self._reader.run(
            lambda _: snapshot.read_snapshot(self.url, self.study, self.path, sink)
        )

    async def _after_erasure(self) -> None:
        """Rewrite every table of the study, so that no file of the server keeps the
        erased rows, and analyse it again, so that the planner's statistics (``pg_stats``,
        which every role that reads the study reads: most common values, histogram bounds)
        no longer show the erased words (``VACUUM`` runs outside a transaction, here on the
        writer's line between two batches)."""

        def vacuum(conn: psycopg.Connection[Any]) -> None:
            tables = conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY c.relname",
                (self.study,),
            ).fetchall()
            for (table,) in tables:  # never prepared by psycopg: a VACUUM cannot be
                name = f"{pg.quoted(self.study)}.{pg.quoted(table)}"
                conn.execute(f"VACUUM (FULL, ANALYZE) {name}", prepare=False)

        line = self._writer_line
        if line is None:
            raise StoreError(f"{self.path} was opened read-only: nothing can be erased")
        await line.run(vacuum)

    async def backup(self, target: Path) -> None:
        """The study copied into a new SQLite file (``bot.store.moving``): a backup that
        ``ozlab erase --backups`` and ``ozlab copy`` read as any other."""
        from bot.store.moving import copy_into_sqlite

        await self._read(lambda sql: copy_into_sqlite(sql, target))


class _Known:
    """What the writer knows of its study between two batches: the revision its last commit
    made and the line sequence as it left it. While nobody else commits (one writer process
    a study), the next batch need not read the sequence: a round trip fewer in the middle of
    each batch. A check at the start of the batch, on the server, makes sure of it."""

    __slots__ = ("revision", "sequence")

    def __init__(self) -> None:
        self.revision: int | None = None
        self.sequence: int | None = None

    def forget(self) -> None:
        self.revision = self.sequence = None


_NOT_OURS = "OZ001"
"""The SQLSTATE of the check below, so that its failure is told from any other error."""


def _unchanged_since(revision: int) -> str:
    """A statement that fails unless the study's revision, just counted up by this batch,
    follows ``revision``: no other writer committed between this writer's batches."""
    return (
        "DO $$ BEGIN IF (SELECT revision FROM store_version) <> "
        f"{int(revision) + 1} THEN RAISE EXCEPTION 'another writer committed'"
        f" USING ERRCODE = '{_NOT_OURS}'; END IF; END $$"
    )


def _run(
    conn: psycopg.Connection[Any],
    jobs: list[Job],
    prepared: dict[str, str],
    known: _Known,
) -> list[Any]:
    """The batch in one transaction, its statements sent together until a job reads an
    answer (``BatchedSql``): ``BEGIN`` goes with the first of them and ``COMMIT`` with the
    last, so that a batch costs one round trip to the server, two when a job reads an
    answer; once more, with the sequence read, when another writer committed in between."""
    while True:
        sql = pg.BatchedSql(conn, prepared)
        try:
            sql.execute("BEGIN")
            # one writer at a time: the row lock serialises the study's writers
            counted = sql.execute(
                "UPDATE store_version SET revision = revision + 1 RETURNING revision"
            )
            if known.revision is not None:
                sql.execute(_unchanged_since(known.revision))
            tx = Tx(sql, known.sequence if known.revision is not None else None)
            results = [job(tx) for job in jobs]
            tx.finish()
            sql.execute("COMMIT")
            sql.flush()
        except BaseException as error:
            if conn.broken:  # the server is gone, and the transaction with it
                raise
            someone_else = isinstance(error, psycopg.Error) and error.sqlstate == _NOT_OURS
            # never prepared by psycopg itself: a DEALLOCATE ALL prepared as one of its own
            # statements would drop itself, and the next failed batch would find it gone
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute("ROLLBACK", prepare=False)
            if prepared:  # what this batch prepared went with it: start again from none
                prepared.clear()
                conn.execute("DEALLOCATE ALL", prepare=False)
            if someone_else and known.revision is not None:
                known.forget()
                continue
            known.forget()
            raise
        known.revision = int(counted.fetchone()[0])
        known.sequence = tx.sequence
        return results


if TYPE_CHECKING:
    from bot.store.interface import StudyStore

    _: type[StudyStore] = PostgresStore  # the backend implements the whole interface
