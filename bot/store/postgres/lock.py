"""One study, one writer, on a PostgreSQL server: ``bot.store.lock``'s two locks as advisory
locks of the server, keyed by the study.

A session-level advisory lock belongs to one connection and is let go when that connection
ends, however the process ends (``kill -9`` closes its socket; the server drops the
session): nothing stale remains, as with ``flock``. The writer's lock is held on a connection
of its own, which names its holder in ``application_name`` for the refusal's line. Presence
is the shared lock every open store's reader holds (``bot.store.postgres.store``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psycopg

from bot.core.errors import StoreError
from bot.store.postgres import connection as pg

_ERASURE_POLL = 0.05


class ServerWriter:
    """The writer's lock on one study of a server, held until :meth:`release`."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn: psycopg.Connection[Any] | None = conn

    def release(self) -> None:
        if self._conn is not None:
            let_go(self._conn)
            self._conn = None

    def held(self) -> bool:
        """Asks the server: the lock lives as long as its session (a round trip)."""
        if self._conn is None:
            return False
        try:
            self._conn.execute("SELECT 1")
        except psycopg.Error:
            return False
        return True

    def __enter__(self) -> ServerWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(server: str, study: str, who: str) -> ServerWriter:
    """The writer's lock on ``study`` for ``who``; refused at once, in one line, when another
    writer has it. An erasure done meanwhile is waited for, as on SQLite."""
    key = pg.lock_key("writer", pg.study_schema(study))
    conn = pg.connect(server, None, application=f"ozlab writer: {who}")
    try:
        while not _locked(conn, "pg_try_advisory_lock", key):
            if not _locked(conn, "pg_try_advisory_lock_shared", key):  # a writer, not an erasure
                raise StoreError(
                    f"study {study} at {pg.shown(server)} is taken by another writer"
                    f" ({_holder(conn, key)}): one study, one writer; stop it or choose"
                    " another study"
                )
            conn.execute("SELECT pg_advisory_unlock_shared(%s)", (key,))
            time.sleep(_ERASURE_POLL)
    except BaseException as error:
        told = pg.when_lost(conn, error)  # the server went away: an outage, not a refusal
        conn.close()
        if told is error:
            raise
        raise told from None
    return ServerWriter(conn)


@contextlib.contextmanager
def alone_on(server: str, study: str) -> Iterator[bool]:
    """True when no writer runs on ``study``, the writer's lock held shared meanwhile so that
    none starts; False when one runs (``bot.store.lock.alone_on``)."""
    with _tried(server, "writer", study, "pg_try_advisory_lock_shared", "ozlab erase") as got:
        yield got


@contextlib.contextmanager
def unused(server: str, study: str) -> Iterator[bool]:
    """True when no ozlab process has ``study`` open, every store kept out meanwhile (a demo
    replacing an earlier simulation's study); False when one has it open."""
    with _tried(server, "presence", study, "pg_try_advisory_lock", "ozlab demo") as got:
        yield got


@contextlib.contextmanager
def _tried(server: str, kind: str, study: str, function: str, who: str) -> Iterator[bool]:
    """Whether ``function`` got the ``kind`` lock on ``study``, held until the block ends."""
    conn = pg.connect(server, None, application=who)
    try:
        yield _locked(conn, function, pg.lock_key(kind, pg.study_schema(study)))
    finally:
        let_go(conn)


def let_go(conn: psycopg.Connection[Any]) -> None:
    """The session's locks let go now, then the connection closed: the server drops them
    with a closed session too, but only once its process has seen the socket close, which
    a command started right after (an erasure after a bot stopped) could come before."""
    try:
        conn.execute("SELECT pg_advisory_unlock_all()")
    except psycopg.Error:
        pass  # a connection the server has already dropped holds no lock
    finally:
        conn.close()


def _locked(conn: psycopg.Connection[Any], function: str, key: int) -> bool:
    row = conn.execute(f"SELECT {function}(%s)", (key,)).fetchone()
    return bool(row and row[0])


def _holder(conn: psycopg.Connection[Any], key: int) -> str:
    """Who holds the lock, as its connection named itself (when this role may see it)."""
    row = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock'"
        " AND ((l.classid::bigint << 32) | l.objid::bigint) = %s",
        (key,),
    ).fetchone()
    name = str(row[0]) if row and row[0] else ""
    return "".join(c for c in name if c.isprintable()) or "another ozlab process"
