"""A study moved from one database to another, checked row for row (``ozlab copy``).

A study can start on a laptop (SQLite) and move to the lab's server (PostgreSQL), or come
back for an archive. Every table is copied in its key order inside one transaction of the
target, then read back in that transaction and compared with the source row for row (a
digest of each table's rows, which differ if one value does); only then is it committed.
The target must not hold the study already: a copy never writes over a study. The source is
read in one consistent snapshot, so a bot may go on running on it meanwhile (what it writes
afterwards is not in the copy).

Both sides must be at this ozlab's schema (SQLite's version and the PostgreSQL version that
holds the same tables): ``ozlab run`` once on an older study brings it up to date.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.errors import StoreError
from bot.core.storable_text import storable_data
from bot.store.backup import write_backup
from bot.store.connection import SCHEMA_VERSION, connect, migrate, schema_version
from bot.store.sql import Sql

CHUNK = 5_000

TABLES: tuple[tuple[str, str], ...] = (
    ("participants", "id"),
    ("sessions", "id"),
    ("exchanges", "id"),
    ("responses", "id"),
    ("events", "id"),
    ("inbox", "update_id"),
    ("studies", "id"),
    ("commands", "id"),
    ("gates", "scope"),
    ("sequence", "id"),
    ("withdrawals", "study_id, system_id"),
    ("invitations", "code"),
    ("payments", "id"),
    ("annotation_jobs", "job"),
    ("annotators", "id"),
    ("annotation_targets", "id"),
    ("annotation_assignments", "target_id, annotator"),
    ("annotations", "id"),
    ("stress_tests", "id"),
    ("stress_replays", "test_id, system_id"),
    ("stress_verdicts", "test_id, system_id, judge"),
    ("erasures", "digest, erased_at"),
    ("votes", "id"),
    ("judge_calls", "key"),
    ("judgements", "job, judge, target, level, item_id"),
    ("written_files", "path"),
    ("money_path", "id"),
    ("media", "id"),
    ("media_files", "digest"),
    ("experimenters", "name"),
    ("sign_in_links", "token_hash"),
)
"""Every table of a study, those that others refer to first, with the key it is read in."""

IDENTITIES: tuple[str, ...] = ("exchanges", "responses", "events", "studies", "commands")
IDENTITIES += ("payments", "annotation_targets", "annotations", "stress_tests", "money_path")
IDENTITIES += ("media",)
"""Tables whose ``id`` PostgreSQL numbers itself: its counter goes on after the copied rows."""


@dataclass
class Moved:
    """What a copy wrote: rows per table, and how many of their values held a code point no
    backend keeps (an older database's NUL), written with U+FFFD in its place."""

    rows: dict[str, int] = field(default_factory=dict)
    changed: int = 0

    def storable(self, row: Sequence[Any]) -> tuple[Any, ...]:
        """``row`` with its texts made storable, the values that changed counted."""
        kept = tuple(storable_data(value) for value in row)
        self.changed += sum(a is not b for a, b in zip(row, kept, strict=True))
        return kept


def copy_rows(source: Sql, target: Sql) -> Moved:
    """Every table's rows from ``source`` into the new ``target`` (what its migrations put
    there, the line counter, makes way for the source's), each text made storable
    (``bot.core.storable_text``: the door of a study from an older database)."""
    moved = Moved()
    for table, key in TABLES:
        target.execute(f"DELETE FROM {table}")
        rows = source.execute(f"SELECT * FROM {table} ORDER BY {key}")
        columns = [d[0] for d in _description(rows)]
        insert = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        moved.rows[table] = 0
        while chunk := rows.fetchmany(CHUNK):
            target.executemany(insert, [moved.storable(row) for row in chunk])
            moved.rows[table] += len(chunk)
        rows.close()
    return moved


def digests(sql: Sql) -> dict[str, str]:
    """A digest of each table's rows in key order: equal when every value is."""
    found = {}
    for table, key in TABLES:
        rows = sql.execute(f"SELECT * FROM {table} ORDER BY {key}")
        columns = sorted(d[0] for d in _description(rows))
        order = {d[0]: i for i, d in enumerate(_description(rows))}
        digest = hashlib.sha256(repr(columns).encode())
        while chunk := rows.fetchmany(CHUNK):
            for row in chunk:
                digest.update(repr(tuple(_value(row[order[c]]) for c in columns)).encode())
        rows.close()
        found[table] = digest.hexdigest()
    return found


def _value(value: Any) -> Any:
    """A value as the copy writes it and both backends give it back (a flag may come back
    as a bool)."""
    return int(value) if isinstance(value, bool) else storable_data(value)


def _description(rows: Any) -> list[Any]:
    description = rows.description
    assert description is not None
    return list(description)


def checked_copy(source: Sql, target: Sql) -> Moved:
    """:func:`copy_rows`, then the target read back and compared with the source."""
    moved = copy_rows(source, target)
    before, after = digests(source), digests(target)
    differing = [table for table, _ in TABLES if before[table] != after[table]]
    if differing:
        raise StoreError(
            f"the copy of table {differing[0]} differs from its source: nothing was copied"
        )
    return moved


def copy_into_sqlite(source: Sql, target: Path) -> Moved:
    """The study read on ``source`` (inside its read transaction) written as a SQLite file
    at ``target`` the way a backup is (``bot.store.backup``: whole or not at all)."""
    moved: list[Moved] = []

    def fill(copy: sqlite3.Connection) -> None:
        migrate(copy, target)
        copy.execute("BEGIN IMMEDIATE")
        try:
            moved.append(checked_copy(source, copy))
        except BaseException:
            copy.execute("ROLLBACK")
            raise
        copy.execute("COMMIT")

    write_backup(target, fill)
    return moved[0]


@contextmanager
def sqlite_source(path: Path) -> Iterator[Sql]:
    """A SQLite study read in one snapshot, never written; at this ozlab's schema."""
    if not path.is_file():
        raise StoreError(f"no study database at {path}")
    conn = connect(path, read_only=True)
    try:
        version = schema_version(conn)
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{path} has schema version {version}; a copy needs {SCHEMA_VERSION}:"
                " start the bot (ozlab run) once on it to upgrade it"
            )
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{path} is not a study database ({error})") from error
    finally:
        conn.close()


@dataclass(frozen=True)
class Copied:
    """What ``ozlab copy`` moved: the study, rows per table, and the values it changed
    (:class:`Moved`)."""

    study: str
    rows: dict[str, int]
    changed: int


def copy_study(source: str, target: str, study: str | None = None) -> Copied:
    """The study at ``source`` (a SQLite file or a server's study) copied to ``target``,
    which must not hold it yet; checked row for row before it is committed."""
    from bot.store.opening import locate

    origin, place = locate(source, study), locate(target, study)
    with ExitStack() as stack:
        if origin.server is None:
            rows = stack.enter_context(sqlite_source(Path(origin.path)))
            name = study or _only_study_id(rows, origin.path)
        else:
            from bot.store.postgres.moving import postgres_source
            from bot.store.postgres.store import only_study

            name = origin.study or only_study(origin.server)
            rows = stack.enter_context(postgres_source(origin.server, name))
        if place.server is None:
            if os.path.lexists(place.path):
                raise StoreError(f"{place.path} exists: a copy never writes over a study")
            moved = copy_into_sqlite(rows, Path(place.path))
            return Copied(name, moved.rows, moved.changed)
        from bot.store.postgres.moving import new_postgres_study

        with new_postgres_study(place.server, place.study or name) as written:
            moved = checked_copy(rows, written)
            return Copied(place.study or name, moved.rows, moved.changed)


def _only_study_id(rows: Sql, path: str) -> str:
    """The study a SQLite file keeps, which names it on a server."""
    found = [
        str(row[0])
        for row in rows.execute(
            "SELECT study_id FROM studies UNION SELECT study_id FROM participants ORDER BY 1"
        )
    ]
    if len(found) != 1:
        held = ", ".join(found) if found else "no study"
        raise StoreError(f"{path} holds {held}: say with --study which name it takes")
    return found[0]
