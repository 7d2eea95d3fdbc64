"""How ozlab connects to a PostgreSQL server, and how the store's SQL runs there.

A study lives in a PostgreSQL schema named after it, so one database serves a lab: a
connection's ``search_path`` is that schema alone, and the statements of ``bot.store``
(written with ``?`` parameter marks, as SQLite takes them) name their tables unqualified.
:class:`PostgresSql` turns ``?`` into psycopg's ``%s`` (cached per statement) and binds on the
client side, as SQLite does: an untyped ``?`` (``? IS NULL``) needs no cast, and a Python
``True`` goes into the integer columns SQLite's schema has as ``1``.

Credentials come from libpq's own places (``PGPASSWORD``, ``~/.pgpass``, a service file named
by ``service=``); a URL with a password in it is refused, since a command line is seen by
every user of the machine (``ps``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, TypeVar

import psycopg
from psycopg.adapt import Buffer, Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.numeric import Int8Dumper

from bot.core.errors import SchemaError, StoreError, StoreUnreachable, without_passwords
from bot.store.postgres.schema import MIGRATIONS
from bot.store.sql import Rows

T = TypeVar("T")
SCHEMA_VERSION = len(MIGRATIONS)
STUDY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
"""A study id that can name a schema as it is: lower case, as a lab's database team reads it."""
_RESERVED = ("pg_", "information_schema", "public")
WAITED = 10
"""Seconds a connection waits for a server that does not answer (libpq's ``connect_timeout``,
unless the URL sets its own): a host that drops packets is out of reach, not a hang."""


def study_schema(study: str) -> str:
    """The schema that keeps ``study``, or the one line that says why it cannot."""
    if not STUDY_NAME.match(study) or study.startswith(_RESERVED):
        raise StoreError(
            f"{study!r} cannot name a study on PostgreSQL: use lower-case letters, digits,"
            " '-' and '_' (up to 63), not starting with pg_, public or information_schema"
        )
    return study


def quoted(name: str) -> str:
    """An identifier as PostgreSQL reads it (the study names allowed hold no quote)."""
    return f'"{name}"'


def conninfo(url: str) -> str:
    """The URL as libpq takes it, refused when it carries a password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise StoreError(f"cannot read the PostgreSQL URL: {error}") from None
    if parts.get("password"):
        raise StoreError(
            "a PostgreSQL URL with a password is seen by every user of the machine:"
            " give it in PGPASSWORD, ~/.pgpass or a service file instead"
        )
    return url


def shown(url: str) -> str:
    """The URL as a line may show it."""
    return without_passwords(url)


def lock_key(kind: str, study: str) -> int:
    """A 64-bit advisory-lock key for one kind of lock on one study of a database."""
    digest = hashlib.sha256(f"ozlab:{kind}:{study}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _TrueIsOne(Int8Dumper):
    """SQLite's schema keeps flags as integers: ``True`` is bound as ``1``."""

    def dump(self, obj: Any) -> Buffer:
        return b"1" if obj else b"0"


class _NumericAsNumber(Loader):
    """``sum`` of integers is an integer and ``avg`` a float, as SQLite gives them, not a
    ``Decimal`` that no float adds to."""

    def load(self, data: Buffer) -> Any:
        text = bytes(data).decode()
        if "." in text or "e" in text.lower() or text in ("NaN", "Infinity", "-Infinity"):
            return float(Decimal(text))
        return int(text)


def connect(url: str, schema: str | None, *, application: str = "ozlab") -> psycopg.Connection[Any]:
    """An autocommit connection whose tables are ``schema``'s (none: the database's own)."""
    given = conninfo(url)
    if "connect_timeout" not in conninfo_to_dict(given):
        given = make_conninfo(given, connect_timeout=WAITED)
    try:
        conn = psycopg.connect(
            given, autocommit=True, cursor_factory=psycopg.Cursor, application_name=application
        )
    except psycopg.OperationalError as error:
        raise refused(error) from None
    conn.adapters.register_dumper(bool, _TrueIsOne)
    conn.adapters.register_loader("numeric", _NumericAsNumber)
    try:
        if schema is not None:
            conn.execute(f"SET search_path TO {quoted(schema)}")
        _compress_fast(conn)
    except psycopg.OperationalError as error:  # the server shuts down as it lets us in
        conn.close()
        raise refused(error) from None
    return conn


_NOT_WEATHER = re.compile(
    r"authentication|password|pg_hba\.conf|role .* does not exist|database .* does not exist"
    r"|permission denied|Name or service not known|invalid ",
    re.IGNORECASE,
)
"""What a server that answers says when waiting will not help: the lab's settings are wrong."""


def refused(error: psycopg.OperationalError) -> StoreError:
    """A failed connection as one line: :class:`StoreUnreachable` when the server is down,
    starting up, shutting down or out of reach (it may come back), else what it refused."""
    line = _first_line(error)
    if _NOT_WEATHER.search(str(error)):
        return StoreError(f"the PostgreSQL server refused the connection: {line}")
    return StoreUnreachable(f"cannot reach the PostgreSQL server: {line}")


def when_lost(conn: psycopg.Connection[Any], error: BaseException) -> BaseException:
    """``error``, or :class:`StoreUnreachable` when it means the connection is gone."""
    if lost(conn, error):
        return StoreUnreachable(f"the PostgreSQL server went away: {_first_line(error)}")
    return error


def lost(conn: psycopg.Connection[Any], error: BaseException) -> bool:
    """Whether ``error`` means the connection is gone (the server restarted, stopped or
    dropped it), not that a statement failed on a live one."""
    return isinstance(error, psycopg.OperationalError | psycopg.InterfaceError) and (
        conn.closed or conn.broken
    )


def _compress_fast(conn: psycopg.Connection[Any]) -> None:
    """Long values (a participant's state with its history, rewritten at every step) compressed
    with lz4 rather than the server's default pglz: less than half the server's CPU for each
    such write (110 against 271 µs for 8 KB, measured). A server built without lz4 keeps its
    default."""
    with contextlib.suppress(psycopg.errors.InvalidParameterValue):
        conn.execute("SET default_toast_compression = lz4")


def within_rights(work: Callable[[], T]) -> T:
    """``work``, a statement the server refuses this role (a grant missing, another study's
    schema) said in one line rather than as a crash: the lab's database team decides the
    rights, and the line names what was refused."""
    try:
        return work()
    except psycopg.errors.InsufficientPrivilege as error:
        raise StoreError(
            f"the PostgreSQL server refused it: {_first_line(error)} (the role lacks a"
            " grant: see the guide 'A lab's server')"
        ) from None


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


_INSTR = re.compile(r"\binstr\(", re.IGNORECASE)
"""SQLite's ``instr(text, part)`` is PostgreSQL's ``strpos``: the one function the store's
statements use that the two name differently."""


@functools.lru_cache(maxsize=1024)
def translated(sql: str) -> str:
    """``sql`` with SQLite's ``?`` as psycopg's ``%s`` (a ``%`` of its own doubled); quoted
    text is left alone."""
    parts = re.split(r"('(?:[^']|'')*')", sql)
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("%", "%%").replace("?", "%s")
        parts[index] = _INSTR.sub("strpos(", parts[index])
    for index in range(1, len(parts), 2):
        parts[index] = parts[index].replace("%", "%%")
    return "".join(parts)


class PostgresSql:
    """:class:`bot.store.sql.Sql` on a psycopg connection.

    Text reaches it storable: what comes from outside was made so at its door
    (``bot.core.storable_text``), the same for SQLite."""

    __slots__ = ("connection",)

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Rows:
        return self.connection.execute(translated(sql), tuple(parameters))

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Rows:
        """Rows for a plain ``INSERT`` go in by ``COPY`` (a study moved to a server: a
        million answers in seconds, not minutes); anything else row by row."""
        cursor = self.connection.cursor()
        rows = [tuple(p) for p in parameters]
        plain = _PLAIN_INSERT.match(sql)
        if plain is None:
            cursor.executemany(translated(sql), rows)
            return cursor
        with cursor.copy(f"COPY {plain.group(1)} ({plain.group(2)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return _Counted(len(rows))


_PLAIN_INSERT = re.compile(r"^INSERT INTO (\w+) \(([\w, ]+)\) VALUES \([?, ]+\)$")
"""An ``INSERT`` of whole rows with nothing after its values (no conflict clause)."""


@functools.lru_cache(maxsize=1024)
def numbered(sql: str) -> str:
    """``sql`` with SQLite's ``?`` as ``$1``, ``$2``... for ``PREPARE``; quoted text is left
    alone."""
    parts = re.split(r"('(?:[^']|'')*')", sql)
    count = 0

    def number(_: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"${count}"

    for index in range(0, len(parts), 2):
        parts[index] = _INSTR.sub("strpos(", re.sub(r"\?", number, parts[index]))
    return "".join(parts)


class BatchedSql:
    """:class:`bot.store.sql.Sql` for the writer: statements are bound on the client and kept
    until one's result is read (or the transaction ends), then sent as one query, a round
    trip for many; the server answers each in turn. A statement per round trip, and
    psycopg's per-statement machinery, made the bot on a server half as fast
    (bench/exchanges.py); what is sent and in what order is unchanged."""

    __slots__ = ("_cursor", "_kept", "_prepared", "_results")

    def __init__(self, connection: psycopg.Connection[Any], prepared: dict[str, str]) -> None:
        """``prepared``: how to run each statement the connection has prepared, by its text
        (the caller empties it, and the server's, when a batch fails: its ``PREPARE`` went
        too)."""
        self._cursor = psycopg.ClientCursor(connection)
        self._kept: list[str] = []
        self._results: list[_Result] = []
        self._prepared = prepared

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Rows:
        values = tuple(parameters)
        if not values:
            self._kept.append(translated(sql).replace("%%", "%"))
            return _Deferred(self, len(self._results) + len(self._kept) - 1)
        call = self._prepared.get(sql)
        if call is None:  # planned once per connection, not once per row
            name = f"ozlab_{len(self._prepared) + 1}"
            self._kept.append(f"PREPARE {name} AS {numbered(sql)}")
            call = self._prepared[sql] = f"EXECUTE {name}({', '.join(['%s'] * len(values))})"
        self._kept.append(self._cursor.mogrify(call, values))
        return _Deferred(self, len(self._results) + len(self._kept) - 1)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Rows:
        count = 0
        for row in parameters:
            self.execute(sql, row)
            count += 1
        return _Counted(count)

    def flush(self) -> None:
        """Send what is kept, as one query, and keep each statement's answer."""
        if not self._kept:
            return
        cursor, kept = self._cursor, self._kept
        self._kept = []
        cursor.execute(";\n".join(kept))
        while True:
            rows = cursor.fetchall() if cursor.description is not None else []
            self._results.append(_Result(cursor.rowcount, cursor.description, rows))
            if not cursor.nextset():
                break

    def result(self, index: int) -> _Result:
        if index >= len(self._results):
            self.flush()
        return self._results[index]


class _Result:
    __slots__ = ("description", "rowcount", "rows")

    def __init__(self, rowcount: int, description: Any, rows: list[Any]) -> None:
        self.rowcount = rowcount
        self.description = description
        self.rows = rows


class _Deferred:
    """A kept statement's result: reading it sends what is kept."""

    __slots__ = ("_at", "_batch", "_read")

    def __init__(self, batch: BatchedSql, at: int) -> None:
        self._batch = batch
        self._at = at
        self._read = 0

    @property
    def rowcount(self) -> int:
        return self._batch.result(self._at).rowcount

    @property
    def description(self) -> Any:
        return self._batch.result(self._at).description

    def fetchone(self) -> Any:
        rows = self._batch.result(self._at).rows
        self._read += 1
        return rows[self._read - 1] if self._read <= len(rows) else None

    def fetchall(self) -> list[Any]:
        rows = self._batch.result(self._at).rows[self._read :]
        self._read += len(rows)
        return rows

    def fetchmany(self, size: int = 1) -> list[Any]:
        rows = self._batch.result(self._at).rows[self._read : self._read + size]
        self._read += len(rows)
        return rows

    def close(self) -> None:
        """Nothing is held open."""

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _Counted:
    """``executemany``'s result: the rows it was given."""

    __slots__ = ("rowcount",)
    description = None

    def __init__(self, rowcount: int) -> None:
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return None

    def fetchall(self) -> list[Any]:
        return []

    def fetchmany(self, size: int = 1) -> list[Any]:
        return []

    def close(self) -> None:
        """Nothing is held open."""

    def __iter__(self) -> Iterator[Any]:
        return iter(())


def studies_in(conn: psycopg.Connection[Any]) -> list[str]:
    """The studies a database keeps: schemas with ozlab's bookkeeping table in them."""
    rows = conn.execute(
        "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relname = 'store_version' AND c.relkind = 'r' ORDER BY n.nspname"
    ).fetchall()
    return [str(row[0]) for row in rows]


def schema_version(conn: psycopg.Connection[Any], schema: str) -> int | None:
    """The migrations a study's schema has had; None when the database has no such study."""
    if schema not in studies_in(conn):
        return None
    row = conn.execute(f"SELECT version FROM {quoted(schema)}.store_version").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection[Any], schema: str, shown: str) -> int:
    """Create the study's schema or bring it up to date, in one transaction; two processes
    at once: the second waits for the first's lock, then finds nothing to do."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("migrate", schema),))
        version = schema_version(conn, schema)
        if version is not None and version > SCHEMA_VERSION:
            raise too_new(version, shown)
        # CREATE SCHEMA asks for the database's CREATE right even when the schema is there:
        # a lab's bot role owns a schema made for it and has no such right
        if (
            conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
            is None
        ):
            with _granted(
                conn,
                schema,
                "create schema {schema} in database {database}: the database team makes it"
                " for the role (CREATE SCHEMA {schema} AUTHORIZATION {role}; the guide"
                " 'A lab's server'), or grants the role CREATE on the database",
            ):
                conn.execute(f"CREATE SCHEMA {quoted(schema)}")
        conn.execute(f"SET LOCAL search_path TO {quoted(schema)}")
        with _granted(
            conn,
            schema,
            "create the study's tables in schema {schema}: the schema must belong to the role"
            " that writes the study (ALTER SCHEMA {schema} OWNER TO {role}; the guide 'A lab's"
            " server')",
        ):
            for number, script in enumerate(MIGRATIONS[version or 0 :], start=(version or 0) + 1):
                conn.execute(script)
                conn.execute("UPDATE store_version SET version = %s", (number,))
    return SCHEMA_VERSION


@contextlib.contextmanager
def _granted(conn: psycopg.Connection[Any], schema: str, missing: str) -> Iterator[None]:
    """A right the role lacks to make a study's schema (a server refuses the statement), said
    in one line with the grant that mends it (``missing``: what the role may not do)."""
    try:
        yield
    # a schema the role may not even use is no schema to PostgreSQL's CREATE TABLE
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.InvalidSchemaName):
        role, database = conn.info.user, conn.info.dbname
        raise StoreError(
            f"role {role} may not "
            + missing.format(schema=quoted(schema), role=quoted(role), database=database)
        ) from None


def too_new(version: int, shown: str) -> SchemaError:
    return SchemaError(
        f"{shown} has PostgreSQL schema version {version}, newer than this ozlab"
        f" ({SCHEMA_VERSION}): upgrade ozlab"
    )


def too_old(version: int, shown: str) -> SchemaError:
    return SchemaError(
        f"{shown} has PostgreSQL schema version {version}; this ozlab needs {SCHEMA_VERSION}:"
        " start the bot (ozlab run) once on it to upgrade it"
    )
