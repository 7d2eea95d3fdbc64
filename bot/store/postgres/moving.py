"""A study's schema as the source or the new target of a copy (``bot.store.moving``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from bot.core.errors import StoreError
from bot.store.moving import IDENTITIES
from bot.store.postgres import connection as pg
from bot.store.sql import Sql


@contextmanager
def postgres_source(url: str, study: str) -> Iterator[Sql]:
    """The study read in one snapshot (repeatable read, read only); at this ozlab's schema."""
    schema = pg.study_schema(study)
    conn = pg.connect(url, schema)
    try:
        version = pg.schema_version(conn, schema)
        if version is None:
            raise StoreError(f"no study {schema!r} in that database")
        if version != pg.SCHEMA_VERSION:
            raise pg.too_old(version, schema)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            yield pg.PostgresSql(conn)
    finally:
        conn.close()


@contextmanager
def new_postgres_study(url: str, study: str) -> Iterator[Sql]:
    """The study's schema created and filled in one transaction: nothing of it remains when
    the block fails. Refused when the database holds the study already."""
    schema = pg.study_schema(study)
    conn = pg.connect(url, None)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (pg.lock_key("migrate", schema),))
            if pg.schema_version(conn, schema) is not None:
                raise StoreError(
                    f"the database holds study {schema!r}: a copy never writes over a study"
                )
            pg.migrate(conn, schema, schema)
            conn.execute(f"SET LOCAL search_path TO {pg.quoted(schema)}")
            sql = pg.PostgresSql(conn)
            yield sql
            for table in IDENTITIES:  # the numbering goes on after the copied rows
                sql.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" (SELECT max(id) FROM {table})) WHERE EXISTS (SELECT 1 FROM {table})"
                )
    finally:
        conn.close()
