"""A demo's or a pilot's study on a server made room for: the study's schema dropped only
when it holds nothing but an earlier simulation and nobody has it open (as
``bot.pilot.demo`` does for a SQLite file)."""

from __future__ import annotations

from bot.core.errors import StoreError
from bot.store.holdings import held
from bot.store.postgres import connection as pg
from bot.store.postgres.lock import unused
from bot.store.postgres.schema import SIMULATED_ANNOTATORS


def clear_simulation(server: str, study: str) -> list[str]:
    """Drop ``study``'s schema when only a simulation is in it and no ozlab process has it
    open; what it holds besides (in words) when that refuses it, else nothing."""
    schema = pg.study_schema(study)
    with unused(server, schema) as alone:
        conn = pg.connect(server, None)
        try:
            with conn.transaction():
                version = pg.schema_version(conn, schema)
                if version is None:
                    return []
                if version > pg.SCHEMA_VERSION:
                    raise pg.too_new(version, schema)
                tables = {
                    str(row[0])
                    for row in conn.execute(
                        "SELECT c.relname FROM pg_class c JOIN pg_namespace n"
                        " ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                        (schema,),
                    )
                }
                conn.execute(f"SET LOCAL search_path TO {pg.quoted(schema)}")
                marked = version >= SIMULATED_ANNOTATORS
                found = held(pg.PostgresSql(conn), tables, simulated_annotators=marked)
                if found:
                    return found
                if not alone:
                    raise StoreError(
                        f"study {schema} at {pg.shown(server)} is open in another process (a"
                        " bot, a console, a report): a simulation replaces only a study nobody"
                        " has open; choose another --study"
                    )
                conn.execute(f"DROP SCHEMA {pg.quoted(schema)} CASCADE")
        finally:
            conn.close()
    return []
