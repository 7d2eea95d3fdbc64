"""The PostgreSQL backend's own guarantees (the contract suite proves the roles on both):
its migrations, a study per schema, one writer per study, and a SQLite run that never loads
any of it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.errors import SchemaError, StoreError, StoreUnreachable
from bot.core.vocabulary import CommandKind
from bot.engine import effects as fx
from bot.store import Access, open_store
from bot.store.claims import alone_on, claim
from bot.store.connection import migrate as sqlite_migrate
from bot.store.model import JudgeCall, JudgementRecord
from bot.store.moving import copy_study
from bot.store.postgres import connection as pg
from bot.store.postgres.connection import SCHEMA_VERSION, translated
from bot.store.postgres.schema import MIGRATIONS, SQLITE_VERSION_OF
from bot.store.transaction import Tx
from tests.conftest import MADE_STUDY
from tests.postgres_server import PASSWORD_ROLE, PostgresServer, free_port
from tests.store_contract.records import session, step
from tests.store_reads import read_tables

SHIPPED = ("b340d2b062db2c23", "ad4714e0e6c486a7", "1c61b88b01f260c3", "65b00a9698268e61")
"""The digest of each PostgreSQL migration that has shipped: a study made by an earlier
ozlab was migrated by exactly these, so they are never edited (a new one is appended)."""


def test_a_shipped_migration_is_never_edited() -> None:
    digests = tuple(hashlib.sha256(m.encode()).hexdigest()[:16] for m in MIGRATIONS)
    assert digests[: len(SHIPPED)] == SHIPPED
    assert len(MIGRATIONS) == SCHEMA_VERSION and SCHEMA_VERSION in SQLITE_VERSION_OF


def test_the_server_keeps_the_tables_and_columns_of_the_sqlite_schema_it_mirrors(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """``ozlab copy`` moves a study both ways only because the two schemas match."""
    conn = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)
    sqlite_migrate(conn)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    on_file = {t: {r[1] for r in conn.execute(f"PRAGMA table_info({t})")} for t in tables}
    conn.close()
    url = postgres.fresh_database()
    asyncio.run(_opened(url + "?study=mirror"))
    rows = postgres.run_sql(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'mirror'",
        url=url,
    )
    on_server: dict[str, set[str]] = {}
    for table, column in rows:
        on_server.setdefault(str(table), set()).add(str(column))
    assert on_server.pop("store_version") == {"id", "version", "revision"}
    assert on_server == on_file


async def _opened(url: str) -> None:
    store = await open_store(url)
    await store.close()


async def test_migrating_twice_at_once_migrates_once_and_a_newer_study_is_refused(
    postgres: PostgresServer,
) -> None:
    url = postgres.fresh_database() + "?study=twice"
    stores = await asyncio.gather(open_store(url), open_store(url))
    for store in stores:
        await store.close()
    base = url.split("?")[0]
    assert postgres.run_sql("SELECT version FROM twice.store_version", url=base) == [
        (SCHEMA_VERSION,)
    ]
    postgres.run_sql("UPDATE twice.store_version SET version = 99", url=base)
    for access in Access:
        with pytest.raises(SchemaError, match="newer than this ozlab"):
            await open_store(url, access=access)


async def test_a_study_that_is_not_there_is_made_only_by_the_bot(
    postgres: PostgresServer,
) -> None:
    url = postgres.fresh_database() + "?study=absent"
    for access in (Access.READ, Access.ATTACH, Access.UPGRADE):
        with pytest.raises(StoreError, match="no study 'absent'"):
            await open_store(url, access=access)
    store = await open_store(url)
    await store.close()


async def test_studies_of_one_database_keep_their_rows_apart(postgres: PostgresServer) -> None:
    base = postgres.fresh_database()
    one = await open_store(base, study="one")
    two = await open_store(base, study="two")
    try:
        await one.commit_step(step("p", *session("p")))
        await two.commit_step(step("q", *session("q")))
        assert [p.participant_id for p in await one.load_participants("s")] == ["p"]
        assert [p.participant_id for p in await two.load_participants("s")] == ["q"]
        await one.erase_participant("p")
        assert [p.participant_id for p in await two.load_participants("s")] == ["q"]
    finally:
        await one.close()
        await two.close()
    with pytest.raises(
        StoreError, match=r"keeps studies one, two: say which with \?study= in the URL"
    ):
        await open_store(base, access=Access.READ)


def test_one_writer_per_study_and_an_erasure_waits_its_turn(postgres: PostgresServer) -> None:
    base = postgres.fresh_database()
    with claim(base, "ozlab run", "alpha"):
        with pytest.raises(StoreError, match=r"taken by another writer \(ozlab writer: ozlab run"):
            claim(base + "?study=alpha", "ozlab demo")
        with claim(base, "ozlab run", "beta"):  # another study of the same database
            pass
        with alone_on(base + "?study=alpha") as alone:
            assert not alone
    with alone_on(base + "?study=alpha") as alone:
        assert alone


def test_statements_keep_their_quoted_text() -> None:
    assert translated("SELECT '?%' , ? FROM t WHERE a LIKE '%x'") == (
        "SELECT '?%%' , %s FROM t WHERE a LIKE '%%x'"
    )
    assert translated("SELECT instr(a, ?) FROM t") == "SELECT strpos(a, %s) FROM t"


def test_a_sqlite_run_loads_nothing_of_the_postgresql_path(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from bot.store import open_store\n"
        "import bot.runtime.app, bot.cli\n"
        "async def main():\n"
        f"    store = await open_store({str(tmp_path / 's.sqlite')!r})\n"
        "    await store.close()\n"
        "asyncio.run(main())\n"
        "bad = [m for m in sys.modules if m.startswith(('psycopg', 'bot.store.postgres'))]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


async def test_a_failed_batch_takes_its_prepared_statements_and_the_next_one_works(
    postgres_study: str,
) -> None:
    """The writer prepares each statement once per connection; a batch that fails takes the
    ``PREPARE`` it sent with it, and the writer starts again from none, however many fail in
    a row (psycopg never prepares the ``ROLLBACK`` and ``DEALLOCATE ALL`` that clear it)."""
    store = await open_store(postgres_study)

    def failing(tx: Tx) -> None:
        tx.conn.execute(
            "INSERT INTO gates (scope, gated, wizard, set_at) VALUES (?,?,?,?)",
            ("study:x", 1, "w", 1.0),
        )
        raise ValueError("a job that fails after its statement went out")

    try:
        for _ in range(8):  # beyond psycopg's own preparing (its fifth run of a statement)
            with pytest.raises(ValueError):
                await store.write(failing)
        await store.commit_step(step("p", *session("p")))
        await store.write(
            lambda tx: tx.conn.execute(
                "INSERT INTO gates (scope, gated, wizard, set_at) VALUES (?,?,?,?)",
                ("study:y", 1, "w", 2.0),
            )
        )
        assert [p.participant_id for p in await store.load_participants("s")] == ["p"]
        assert [str(scope) for scope in await store.gates()] == ["study:y"]
    finally:
        await store.close()


async def test_a_study_moves_to_a_server_and_back_row_for_row(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """``ozlab copy`` both ways: every row as it was (an older file's NUL as U+FFFD, counted),
    the numbering going on after the copied rows, and never over a study."""
    laptop = tmp_path / "laptop.sqlite"
    store = await open_store(laptop)
    await store.commit_step(step("p", *session("p"), fx.RecordUserTurn("p-1", 1, "a\x00b 0.1")))
    await store.append_command("w", CommandKind.NOTE, "p-1", {"text": "first"})
    call = JudgeCall("k", "gpt-judge", '{"content": "a b"}', "4", 12, None, "p-1", "q-1")
    await store.keep_judge_call(call)
    judgement = JudgementRecord(
        "j", "gpt-judge", "p-1#1", "exchange", "i", "m", "127.0.0.1", "0123456789ab", 0.5,
        None, "rated", "4", True, "k", 7.25, "p-1",
    )  # fmt: skip
    await store.keep_judgements([judgement])
    await store.close()
    server = postgres.fresh_database()
    copied = await asyncio.to_thread(copy_study, str(laptop), server, "moved")
    assert copied.rows["participants"] == 1 and copied.rows["exchanges"] == 1
    assert copied.rows["judge_calls"] == copied.rows["judgements"] == 1
    assert copied.changed == 1
    on_server = await open_store(server, study="moved")
    try:  # the server numbers the next command after the copied one
        assert await on_server.append_command("w", CommandKind.NOTE, "p-1") == 2
    finally:
        await on_server.close()
    back = tmp_path / "back.sqlite"
    await asyncio.to_thread(copy_study, server + "?study=moved", str(back))
    [exchange] = (await read_tables(back))["exchanges"]
    assert exchange["user_text"] == "a\ufffdb 0.1"
    returned = await open_store(back)
    try:
        assert await returned.judge_call("k") == call
        assert await returned.judgements() == [judgement]
    finally:
        await returned.close()
    with pytest.raises(StoreError, match="a copy never writes over a study"):
        copy_study(str(laptop), server, "moved")
    with pytest.raises(StoreError, match="a copy never writes over a study"):
        copy_study(server + "?study=moved", str(back))


async def test_a_long_state_is_compressed_with_lz4_where_the_server_has_it(
    postgres: PostgresServer, postgres_study: str
) -> None:
    """A participant's state with its history is rewritten at every step: lz4 costs the
    server less than half of pglz's CPU for it (the default pglz stays on a server built
    without lz4, which Debian's is not)."""
    history = [{"user": f"message {i}", "system": "a reply of some length " * 8} for i in range(40)]
    store = await open_store(postgres_study)
    try:
        await store.commit_step(step("p", *session("p"), state=json.dumps({"history": history})))
    finally:
        await store.close()
    [(method,)] = postgres.run_sql(
        f"SELECT pg_column_compression(state) FROM {MADE_STUDY}.participants",
        url=postgres_study.split("?")[0],
    )
    assert method == "lz4"


def test_a_server_out_of_reach_is_an_outage_and_a_refused_password_is_not(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ozlab run`` waits out the first (a server down or restarting) and stops at once on
    the second: waiting cannot mend a password."""
    with pytest.raises(StoreUnreachable, match="cannot reach the PostgreSQL server"):
        pg.connect(f"postgresql://ozlab@127.0.0.1:{free_port()}/ozlab", None)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent/pgpass")
    with pytest.raises(StoreError, match="refused the connection") as refused:
        pg.connect(postgres.url_for(PASSWORD_ROLE, "ozlab"), None)
    assert not isinstance(refused.value, StoreUnreachable)
