"""How ozlab connects to a PostgreSQL server, and how the store's SQL runs there.

A study lives in a PostgreSQL schema named after it, so one database serves a lab: a
connection's ``search_path`` is that schema alone, and the statements of ``bot.store``
(written with ``?`` placeholders, as SQLite takes them) name their tables unqualified.
:class:`PostgresSql` turns ``?`` into psycopg's ``%s`` (cached per statement) and binds on the
client side, as SQLite does: an untyped ``?`` (``? IS NULL``) needs no cast, and a Python
``True`` goes into the integer columns SQLite's schema has as ``1``.

Credentials come from libpq's own places (``PGPASSWORD``, ``~/.pgpass``, a service file named
by ``service=``); a URL with a password in it is refused, since a command line is seen by
every user of the machine (``ps``).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.adapt import Buffer, Loader
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.numeric import Int8Dumper
from psycopg.types.string import StrDumperUnknown

from bot.core.errors import SchemaError, StoreError, without_passwords
from bot.store.postgres.schema import MIGRATIONS
from bot.store.sql import Rows

SCHEMA_VERSION = len(MIGRATIONS)
STUDY_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
"""A study id that can name a schema as it is: lower case, as a lab's database team reads it."""
_RESERVED = ("pg_", "information_schema", "public")


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


class _NoNul(StrDumperUnknown):
    """PostgreSQL's text cannot hold the NUL character, which a participant's message, a
    system's reply or an imported file may carry: it is kept as U+FFFD, the replacement
    character, and the write goes through (SQLite keeps the NUL itself)."""

    def dump(self, obj: str) -> Buffer | None:
        return super().dump(obj.replace("\x00", "\ufffd") if "\x00" in obj else obj)


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
    try:
        conn = psycopg.connect(
            conninfo(url),
            autocommit=True,
            cursor_factory=psycopg.ClientCursor,
            application_name=application,
        )
    except psycopg.OperationalError as error:
        raise StoreError(f"cannot reach the PostgreSQL server: {_first_line(error)}") from None
    conn.adapters.register_dumper(bool, _TrueIsOne)
    conn.adapters.register_dumper(str, _NoNul)
    conn.adapters.register_loader("numeric", _NumericAsNumber)
    if schema is not None:
        conn.execute(f"SET search_path TO {quoted(schema)}")
    return conn


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
    """:class:`bot.store.sql.Sql` on a psycopg connection."""

    __slots__ = ("connection",)

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Rows:
        return self.connection.execute(translated(sql), tuple(parameters))

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Rows:
        cursor = self.connection.cursor()
        cursor.executemany(translated(sql), [tuple(p) for p in parameters])
        return cursor


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
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {quoted(schema)}")
        conn.execute(f"SET LOCAL search_path TO {quoted(schema)}")
        for number, script in enumerate(MIGRATIONS[version or 0 :], start=(version or 0) + 1):
            conn.execute(script)
            conn.execute("UPDATE store_version SET version = %s", (number,))
    return SCHEMA_VERSION


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
