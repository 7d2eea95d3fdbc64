"""One consistent read of a study on a PostgreSQL server for analytics, as Arrow tables.

The tables are read columnar by the ADBC PostgreSQL driver (the server's binary ``COPY``
straight into Arrow), as the SQLite backend reads its file: rows made into Python values
took most of a report's time. Every table is read inside one ``REPEATABLE READ, READ ONLY``
transaction of a connection of its own, whose ``search_path`` is the study's schema, and a
second connection that imports the same snapshot reads the later half of a large table at
the same time: the tables agree with each other and nothing is written. The sink gets the
Arrow types the SQLite path gives for the same rows, so analytics makes the same frames of
them. The driver is imported only when a snapshot is read: neither the bot nor a SQLite
study needs it.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from bot.core.errors import StoreError
from bot.store import snapshot
from bot.store.model import SnapshotInfo, SnapshotSink
from bot.store.postgres import connection as pg
from bot.store.postgres.schema import SQLITE_VERSION_OF

if TYPE_CHECKING:
    import pyarrow
    from adbc_driver_manager.dbapi import Connection as ArrowConnection

WHOLE_TABLE = 1 << 40
"""Bytes per Arrow batch: a table in one batch, as the SQLite path reads it. In batches of
the driver's 16 MB, a million answers came as a dozen, and the report's peak memory was
190 MB higher (bench/report.py: 900 MB, against 717 MB and SQLite's 694 MB)."""
_BATCH_BYTES = "adbc.postgresql.batch_size_hint_bytes"

MISSING = (
    "reading a study on PostgreSQL for analytics needs adbc-driver-postgresql:"
    " pip install 'ozlab[postgresql]'"
)


def read_snapshot(url: str, schema: str, shown: str, sink: SnapshotSink) -> SnapshotInfo:
    """Call ``sink`` with every snapshot table of ``schema``; ``url`` as libpq takes it
    (credentials from libpq's environment), ``shown`` naming the study in a line."""
    try:
        import adbc_driver_postgresql.dbapi as driver
    except ImportError:
        raise StoreError(MISSING) from None

    def connected() -> ArrowConnection:
        try:
            made: ArrowConnection = driver.connect(pg.conninfo(url), autocommit=True)
        except driver.Error as error:
            raise StoreError(f"cannot reach the PostgreSQL server: {_first_line(error)}") from None
        return made

    arrow = connected()
    second: ArrowConnection | None = None
    try:
        queries = _Queries(arrow)
        queries.execute(_BEGIN)
        queries.execute(f"SET LOCAL search_path TO {pg.quoted(schema)}")
        [(exported,)] = queries.execute("SELECT pg_export_snapshot()")
        second = connected()
        helper = _Queries(second)
        helper.execute(_BEGIN)
        helper.execute(f"SET TRANSACTION SNAPSHOT '{exported}'")
        helper.execute(f"SET LOCAL search_path TO {pg.quoted(schema)}")
        version = SQLITE_VERSION_OF[pg.SCHEMA_VERSION]
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ozlab-pg-snapshot") as other:
            read = functools.partial(_arrow_table, arrow, second, other)
            info = snapshot.read_tables(queries, sink, version, True, read)
        for each in (helper, queries):
            each.execute("COMMIT")  # nothing was written: the snapshot is let go
        return info
    except driver.Error as error:
        raise StoreError(f"cannot read {shown}: {_first_line(error)}") from None
    finally:
        if second is not None:
            second.close()
        arrow.close()


_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
HALVED = 100_000
"""Rows of a table (by its ids) above which its two halves are read at once, on two
connections that share one snapshot (``pg_export_snapshot``): the driver's decoding of
the server's rows, one core's work, takes most of a large study's read."""


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class _Queries:
    """The driver's connection as ``Queries``: each statement's rows fetched, its cursor
    closed (the statements read are plain SQL, without parameters)."""

    def __init__(self, conn: ArrowConnection) -> None:
        self.conn = conn

    def execute(self, sql: str, /) -> snapshot.Fetched:
        with self.conn.cursor() as cursor:
            cursor.execute(sql)
            rows: list[tuple[Any, ...]] = cursor.fetchall() if cursor.description else []
            return snapshot.Fetched(rows)


def _arrow_table(
    conn: ArrowConnection,
    second: ArrowConnection,
    other: ThreadPoolExecutor,
    table: str,
    sql: str,
) -> pyarrow.Table:
    """``sql``'s result as the SQLite path types the same rows (``as_sqlite_reads``); a
    large table ordered by its id read in two halves at once, one on ``second``."""
    import pyarrow as pa

    head, by_id, _ = sql.rpartition(_BY_ID)
    if by_id:
        with conn.cursor() as cursor:
            cursor.execute(f"SELECT min(id), max(id) FROM {table}")
            low, high = cursor.fetchone() or (None, None)
        if low is not None and high - low > HALVED:
            middle = (low + high) // 2
            later = other.submit(_fetched, second, f"{head} WHERE id > {middle}{_BY_ID}")
            first = _fetched(conn, f"{head} WHERE id <= {middle}{_BY_ID}")
            return as_sqlite_reads(pa.concat_tables([first, later.result()]))
    return as_sqlite_reads(_fetched(conn, sql))


_BY_ID = " ORDER BY id"


def _fetched(conn: ArrowConnection, sql: str) -> pyarrow.Table:
    with conn.cursor(adbc_stmt_kwargs={_BATCH_BYTES: str(WHOLE_TABLE)}) as cursor:
        cursor.execute(sql)
        return cursor.fetch_arrow_table()


def as_sqlite_reads(result: pyarrow.Table) -> pyarrow.Table:
    """``result`` without the driver's notes of each column's PostgreSQL type, and a column
    without a value (every column of an empty table) as int64, as SQLite's driver gives one
    whose type no value shows; every other column keeps its type (int64, double, string), the
    one SQLite's driver infers from the values of the schema's columns."""
    import pyarrow as pa

    rows = result.num_rows
    fields, columns = [], []
    for field, column in zip(result.schema, result.columns, strict=True):
        if column.null_count == rows:
            field = field.with_type(pa.int64())
            column = pa.chunked_array([pa.nulls(rows, pa.int64())])
        fields.append(field.remove_metadata())
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))
