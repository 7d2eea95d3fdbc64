"""Analytics reads a study on PostgreSQL columnar (ADBC) and makes of it exactly the frames,
and the report, that it makes of the same study in a SQLite file."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import sys
from pathlib import Path

import pandas as pd
import psycopg
import pyarrow as pa
import pytest

from analytics.data.loading import StudyData, load_study_data
from bot.cli import analytics_main
from bot.core.errors import StoreError
from bot.store import Access, open_store
from bot.store.model import SNAPSHOT_COLUMNS
from bot.store.postgres import snapshot
from bot.store.postgres.snapshot import MISSING
from tests.command_line import ozlab_here
from tests.conftest import MADE_STUDY
from tests.postgres_server import PASSWORD, PASSWORD_ROLE, PostgresServer

STUDY = "hmd"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo study in a SQLite file, as ``ozlab demo`` writes one."""
    folder = tmp_path_factory.mktemp("demo")
    done = ozlab_here("demo", "-n", "6", "--seed", "3", "--db", folder / "demo.sqlite")
    assert done.returncode == 0, done.stderr
    return folder / "demo.sqlite"


def copied(source: Path, postgres: PostgresServer) -> str:
    """``source`` moved by ``ozlab copy`` into a new database: the study's URL."""
    database = postgres.fresh_database()
    done = ozlab_here("copy", "--db", source, "--to", database)
    assert done.returncode == 0, done.stderr
    return f"{database}?study={STUDY}"


def assert_same_data(found: StudyData, expected: StudyData) -> None:
    for field in dataclasses.fields(StudyData):
        ours, theirs = getattr(found, field.name), getattr(expected, field.name)
        if isinstance(theirs, pd.DataFrame):
            pd.testing.assert_frame_equal(ours, theirs, check_exact=True, obj=field.name)
        else:
            assert ours == theirs, field.name


def arrow_schemas(db: str | Path) -> dict[str, pa.Schema]:
    """The Arrow schema of each table the store hands a snapshot's sink."""
    schemas: dict[str, pa.Schema] = {}

    async def read() -> None:
        store = await open_store(db, access=Access.READ)
        try:
            await store.read_snapshot(lambda table, rows: schemas.__setitem__(table, rows.schema))
        finally:
            await store.close()

    asyncio.run(read())
    return schemas


@pytest.mark.slow
def test_a_study_on_postgresql_gives_the_frames_and_report_of_its_sqlite_copy(
    demo: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copied(demo, postgres)
    assert_same_data(load_study_data(url), load_study_data(demo))
    assert arrow_schemas(url) == arrow_schemas(demo)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    texts = []
    for db in (demo, url):
        out = demo.parent / "report.json"
        done = ozlab_here("report", "--db", db, "--format", "json", "--out", out)
        assert done.returncode == 0, done.stderr
        lines = out.read_text().splitlines(keepends=True)
        [source] = [line for line in lines if line.startswith(' "source": ')]
        texts.append([line for line in lines if line is not source])
    assert texts[0] == texts[1]


@pytest.mark.slow
def test_large_tables_read_in_two_halves_give_the_same_frames(
    demo: Path, postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copied(demo, postgres)
    monkeypatch.setattr(snapshot, "HALVED", 1)  # every table ordered by its ids is halved
    assert_same_data(load_study_data(url), load_study_data(demo))
    assert arrow_schemas(url) == arrow_schemas(demo)


@pytest.mark.slow
def test_nulls_in_every_nullable_column_read_as_on_sqlite(
    demo: Path, postgres: PostgresServer, tmp_path: Path
) -> None:
    emptied = tmp_path / "nulls.sqlite"
    emptied.write_bytes(demo.read_bytes())
    conn = sqlite3.connect(emptied, isolation_level=None)
    try:
        for table in SNAPSHOT_COLUMNS:
            nullable = [
                name
                for _, name, _, notnull, _, key in conn.execute(f"PRAGMA table_info({table})")
                if not notnull and not key
            ]
            conn.execute(f"UPDATE {table} SET " + ", ".join(f"{c} = NULL" for c in nullable))
    finally:
        conn.close()
    url = copied(emptied, postgres)
    found = load_study_data(url)
    assert found.sessions["ended_at"].isna().all() and len(found.sessions) > 0
    assert_same_data(found, load_study_data(emptied))
    assert arrow_schemas(url) == arrow_schemas(emptied)


def test_an_empty_study_reads_as_an_empty_sqlite_file(postgres_study: str, tmp_path: Path) -> None:
    sqlite_file = tmp_path / "empty.sqlite"
    asyncio.run(_created(sqlite_file))
    found = load_study_data(postgres_study)
    assert all(len(getattr(found, table)) == 0 for table in SNAPSHOT_COLUMNS)
    assert_same_data(found, load_study_data(sqlite_file))
    schemas = arrow_schemas(postgres_study)
    assert schemas == arrow_schemas(sqlite_file)
    assert {t.type for schema in schemas.values() for t in schema} == {pa.int64()}


async def _created(db: str | Path) -> None:
    store = await open_store(db)
    await store.close()


@pytest.mark.parametrize("halved", [False, True], ids=["whole", "halves"])
def test_every_table_is_read_in_one_snapshot(
    postgres: PostgresServer, postgres_study: str, monkeypatch: pytest.MonkeyPatch, halved: bool
) -> None:
    """A row written while the snapshot is read (between its first table and the others)
    is in none of them: the tables agree with each other, and so do a table's two halves
    read on two connections."""
    url = postgres_study.split("?")[0]
    before = 4
    postgres.run_sql(
        f"INSERT INTO {MADE_STUDY}.events (at, kind, data) SELECT n, 'before', '{{}}'"
        f" FROM generate_series(1, {before}) AS n",
        url=url,
    )
    if halved:
        monkeypatch.setattr(snapshot, "HALVED", 1)
    seen: dict[str, int] = {}

    def sink(table: str, rows: pa.Table) -> None:
        if not seen:
            with psycopg.connect(url, autocommit=True) as writer:
                writer.execute(
                    f"INSERT INTO {MADE_STUDY}.events (at, kind, data)"
                    " VALUES (1, 'written_meanwhile', '{}')"
                )
        seen[table] = rows.num_rows

    async def read() -> None:
        store = await open_store(postgres_study, access=Access.READ)
        try:
            await store.read_snapshot(sink)
        finally:
            await store.close()

    asyncio.run(read())
    assert list(seen) == list(SNAPSHOT_COLUMNS) and seen["events"] == before
    [(count,)] = postgres.run_sql(f"SELECT count(*) FROM {MADE_STUDY}.events", url=url)
    assert count == before + 1


def test_the_columnar_read_takes_credentials_from_libpq_s_environment(
    postgres: PostgresServer, postgres_study: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, study = postgres_study.split("?")[0], MADE_STUDY
    database = owner.rsplit("/", 1)[1]
    postgres.run_sql(f"GRANT USAGE ON SCHEMA {study} TO {PASSWORD_ROLE}", url=owner)
    postgres.run_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA {study} TO {PASSWORD_ROLE}", url=owner)
    url = postgres.url_for(PASSWORD_ROLE, database) + f"?study={study}"
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    assert len(load_study_data(url).sessions) == 0


def test_without_the_driver_a_report_says_what_to_install_in_one_line(
    postgres_study: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m.startswith("adbc_driver_postgresql")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "adbc_driver_postgresql", None)
    code = analytics_main(["report", "--db", postgres_study, "--format", "json"])
    [line] = capsys.readouterr().err.splitlines()
    assert code == StoreError.exit_code
    assert line.endswith(MISSING)
