"""One consistent read of a whole study for analytics, as Arrow tables.

Everything is read inside one read transaction on a read-only connection: the tables agree
with each other and the file is never written. The tables are read columnar, by the ADBC
SQLite driver straight into Arrow: a million answers never become Python objects, which took
most of a report's time. A file of an older schema is copied into memory and upgraded there
by the same migrations the bot runs, then read as rows and made into the same Arrow tables,
so analytics reads one shape of data and no rule exists twice. pyarrow and the driver are
imported only when a snapshot is read: the bot never reads one.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.core.errors import StoreError
from bot.store.annotating import annotation_jobs
from bot.store.annotation_ratings import ratings
from bot.store.connection import SCHEMA_VERSION, migrate, schema_version, too_new
from bot.store.erasure import withdrawals
from bot.store.judges import costs, judgements
from bot.store.model import SNAPSHOT_COLUMNS, SnapshotInfo, SnapshotSink
from bot.store.sql import Queries

if TYPE_CHECKING:
    import pyarrow
    from adbc_driver_sqlite.dbapi import AdbcSqliteConnection as ArrowConnection

WHOLE_TABLE = 1 << 30
"""Rows per Arrow batch: a table in one batch, because the driver infers each column's type
from its first batch and fails on a later one that disagrees."""

_ID = {
    "sessions": "session_id",
    "exchanges": "exchange_id",
    "responses": "response_id",
    "events": "event_id",
    "participants": "participant_id",
    "commands": "command_id",
    "votes": "vote_id",
    "media": "media_id",
}
_ORDER = {
    "sessions": "started_at, id",
    "exchanges": "session_id, turn",
    "responses": "id",
    "events": "id",
    "participants": "created_at, id",
    "commands": "id",
    "votes": "voted_at, id",
    "media": "session_id, turn, id",
}
_STORED = ("integer", "real", "text", "blob")
"""The types SQLite stores a value as (``typeof``), in the order of ``_arrow_types``."""
_WORDS = ("CHAR", "CLOB", "TEXT")
"""What makes a declared column type keep text as text (SQLite's type affinity)."""


def read_snapshot(conn: sqlite3.Connection, path: str, sink: SnapshotSink) -> SnapshotInfo:
    """Call ``sink`` with every snapshot table; ``conn`` (read-only) serves an older file."""
    import adbc_driver_sqlite.dbapi as driver

    try:
        arrow = driver.connect(f"{Path(path).resolve().as_uri()}?mode=ro")
    except driver.Error as error:
        raise StoreError(f"cannot open the study database {path}: {error}") from error
    try:
        queries = _Queries(arrow)
        version = schema_version(queries)  # the first read: the transaction's snapshot
        if version > SCHEMA_VERSION:
            raise too_new(version, path)
        if version == SCHEMA_VERSION:
            tables = _has_tables(queries)
            columnar = functools.partial(_arrow_table, arrow)
            return read_tables(queries, sink, version, tables, columnar)
    except driver.Error as error:
        raise StoreError(f"cannot read the study database {path}: {error}") from error
    finally:
        arrow.close()  # ends the read transaction: nothing was written
    return _upgraded(conn, path, sink, version)


class Fetched(list[tuple[Any, ...]]):
    """A query's rows, all fetched."""

    def fetchone(self) -> tuple[Any, ...] | None:
        return self[0] if self else None


class _Queries:
    """The driver's connection as ``Queries``: each query's rows fetched, its cursor closed."""

    def __init__(self, conn: ArrowConnection) -> None:
        self.conn = conn

    def execute(self, sql: str, /) -> Fetched:
        with self.conn.cursor() as cursor:
            cursor.execute(sql)
            return Fetched(cursor.fetchall())


def _upgraded(
    conn: sqlite3.Connection, path: str, sink: SnapshotSink, version: int
) -> SnapshotInfo:
    """A file of an older schema, upgraded in memory and read there."""
    conn.execute("BEGIN")
    try:
        tables = _has_tables(conn)
        upgraded = sqlite3.connect(":memory:", isolation_level=None)
        conn.backup(upgraded)
    finally:
        conn.execute("COMMIT")
    try:
        migrate(upgraded, path)
        upgraded.execute("BEGIN")
        return read_tables(upgraded, sink, version, tables)
    finally:
        upgraded.close()


def _has_tables(conn: Queries) -> bool:
    found = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"
    ).fetchone()
    return bool(found[0])


def read_tables(
    conn: Queries,
    sink: SnapshotSink,
    version: int,
    has_tables: bool,
    table_of: Callable[[str, str], pyarrow.Table] | None = None,
) -> SnapshotInfo:
    """Every table and what comes with them, inside the transaction ``conn`` is in: each
    table read by ``table_of`` (table, query), by default from ``conn``'s rows, which any
    backend's connection gives."""
    for table, columns in SNAPSHOT_COLUMNS.items():
        selected = ", ".join(f"id AS {c}" if c == _ID[table] else c for c in columns)
        query = f"SELECT {selected} FROM {table} ORDER BY {_ORDER[table]}"
        sink(table, (table_of or functools.partial(_rows_table, conn))(table, query))
    definitions = tuple(
        (str(study), str(definition))
        for study, definition in conn.execute(
            "SELECT study_id, definition FROM studies ORDER BY id"
        )
    )
    return SnapshotInfo(
        version,
        has_tables,
        definitions,
        withdrawals(conn),
        tuple(ratings(conn)),
        tuple(annotation_jobs(conn)),
        tuple(judgements(conn)),
        tuple(costs(conn)),
    )


def _arrow_table(conn: ArrowConnection, table: str, sql: str) -> pyarrow.Table:
    """``sql``'s result as the driver reads it, but for a column of a numeric type that holds
    words as well: the driver would write its numbers as words, so it is read again by type."""
    import pyarrow as pa

    with conn.cursor(adbc_stmt_kwargs={"adbc.sqlite.query.batch_rows": str(WHOLE_TABLE)}) as cur:
        cur.execute(sql)
        result = cur.fetch_arrow_table()
        declared = dict(
            cur.execute(f"SELECT name, upper(type) FROM pragma_table_info('{table}')").fetchall()
        )
    for index, name in enumerate(result.column_names):
        stored = declared.get("id" if name == _ID[table] else name, "")
        if pa.types.is_string(result.schema.field(index).type) and not any(
            word in stored for word in _WORDS
        ):
            result = result.set_column(index, name, _by_type(conn, table, name))
    return result


def _by_type(conn: ArrowConnection, table: str, name: str) -> pyarrow.Array:
    """One column read as four, one per type SQLite stored, joined into a union (a part
    without a value comes as the driver's default type: it is made the one it stands for)."""
    import pyarrow as pa

    column = "id" if name == _ID[table] else name
    split = ", ".join(f"CASE typeof({column}) WHEN '{kind}' THEN {column} END" for kind in _STORED)
    with conn.cursor(adbc_stmt_kwargs={"adbc.sqlite.query.batch_rows": str(WHOLE_TABLE)}) as cur:
        cur.execute(f"SELECT {split} FROM {table} ORDER BY {_ORDER[table]}")
        parts = cur.fetch_arrow_table()
    children = [
        pa.nulls(len(part), kind) if part.null_count == len(part) else part.cast(kind)
        for part, kind in zip(
            (c.combine_chunks() for c in parts.columns), _arrow_types(), strict=True
        )
    ]
    return _union([child.is_valid() for child in children], children)


def _union(present: Sequence[pyarrow.Array], children: Sequence[pyarrow.Array]) -> pyarrow.Array:
    """A sparse union of ``children`` (one value per row each), each row taking the child
    whose value is ``present`` (a missing value: the first child's null)."""
    import numpy as np
    import pyarrow as pa

    kinds = np.zeros(len(children[0]), dtype=np.int8)
    for code, mask in enumerate(present):
        kinds[mask.to_numpy(zero_copy_only=False)] = code
    return pa.UnionArray.from_sparse(pa.array(kinds, type=pa.int8()), list(children))


def _rows_table(conn: Queries, table: str, sql: str) -> pyarrow.Table:
    """``sql``'s rows (of an upgraded copy in memory, say) as an Arrow table, typed as the
    driver types them: each column from its values, a column of several types as a union."""
    import pyarrow as pa

    names = list(SNAPSHOT_COLUMNS[table])
    rows = list(conn.execute(sql))
    values: list[Sequence[object]] = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    return pa.table([_column(list(v)) for v in values], names=names)


def _column(values: list[object]) -> pyarrow.Array:
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        kinds = (int, float, str, bytes)
        children = [
            pa.array([v if type(v) is kind else None for v in values], type=arrow)
            for kind, arrow in zip(kinds, _arrow_types(), strict=True)
        ]
        present = [pa.array([type(v) is kind for v in values]) for kind in kinds]
        return _union(present, children)


def _arrow_types() -> list[pyarrow.DataType]:
    import pyarrow as pa

    return [pa.int64(), pa.float64(), pa.string(), pa.binary()]
