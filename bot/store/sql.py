"""What the store's SQL needs of a connection, whichever backend keeps the rows.

The statements in ``bot.store`` are written once, in the SQL that SQLite and PostgreSQL both
speak (``?`` parameter marks, ``ON CONFLICT``, ``RETURNING``); each backend hands them a
connection of this shape on its own thread, inside its own transaction: ``sqlite3``'s as it
is, PostgreSQL's through ``bot.store.postgres.connection``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

__all__ = ["Fetched", "Queries", "Rows", "Sql", "has_table"]


class Rows(Protocol):
    """A statement's result, read the DB-API way."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...

    def close(self) -> None: ...

    def __iter__(self) -> Iterator[Any]: ...


class Sql(Protocol):
    """A connection inside a transaction: statements with ``?`` parameter marks."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Rows: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Rows: ...


class Fetched(Protocol):
    """What a query without parameters gives back: rows one at a time, or the next one."""

    def __iter__(self) -> Iterator[Any]: ...

    def fetchone(self) -> Any: ...


class Queries(Protocol):
    """A connection that runs a query without parameters: any backend's, or the snapshot's
    Arrow connection, so that the reads a snapshot shares are written once."""

    def execute(self, sql: str, /) -> Fetched: ...


def has_table(conn: Queries, name: str) -> bool:
    """Whether the study has table ``name``: only a SQLite file of an older schema lacks
    one (analytics reads those as they are); a PostgreSQL study is always migrated first."""
    if not isinstance(conn, sqlite3.Connection):
        return True
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None
