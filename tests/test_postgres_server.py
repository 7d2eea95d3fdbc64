"""The throw-away PostgreSQL server the store's tests run against, and its password role.

The password role proves, for the PostgreSQL store, that a password can come from each of
libpq's environment forms: PGPASSWORD, ~/.pgpass and a service file.
"""

from __future__ import annotations

import gc
import os
import select
import subprocess
import sys
import warnings
from pathlib import Path

import psycopg
import pytest

from bot.store import Access, open_store
from bot.store.opening import studies_at
from tests import postgres_server
from tests.conftest import MADE_STUDY
from tests.postgres_server import (
    PASSWORD,
    PASSWORD_ROLE,
    SUPERUSER,
    PostgresServer,
    PostgresUnavailable,
    locate_bin,
)

ROOT = Path(__file__).parents[1]


@pytest.fixture
def bare_libpq(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No password anywhere libpq looks: a home of our own, no PG* variables."""
    for name in [k for k in os.environ if k.startswith("PG")]:
        monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_the_server_takes_the_superuser_on_loopback(postgres: PostgresServer) -> None:
    assert postgres.url == f"postgresql://ozlab@127.0.0.1:{postgres.port}/ozlab"
    rows = postgres.run_sql("SELECT current_user, current_database(), current_setting('fsync')")
    assert rows == [(SUPERUSER, SUPERUSER, "off")]  # the tests' server; benchmarks fsync
    assert postgres.run_sql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") == [
        (True,)
    ]
    assert postgres.run_sql("SHOW listen_addresses") == [("127.0.0.1",)]
    assert (postgres.data_dir / "PG_VERSION").is_file()
    assert (postgres.bin / "initdb").is_file()
    assert postgres.data_dir.stat().st_mode & 0o077 == 0


def test_the_password_role_is_refused_without_a_password(
    postgres: PostgresServer, bare_libpq: Path
) -> None:
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(postgres.url_for(PASSWORD_ROLE, SUPERUSER)).close()


def test_the_password_role_is_refused_with_a_wrong_password(
    postgres: PostgresServer, bare_libpq: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-" + PASSWORD)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(postgres.url_for(PASSWORD_ROLE, SUPERUSER)).close()


def whoami(url: str) -> str:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT current_user").fetchone()
    assert row is not None
    return str(row[0])


def test_the_password_comes_from_pgpassword(
    postgres: PostgresServer, bare_libpq: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    assert whoami(postgres.url_for(PASSWORD_ROLE, SUPERUSER)) == PASSWORD_ROLE


def test_the_password_comes_from_pgpass_in_home(postgres: PostgresServer, bare_libpq: Path) -> None:
    pgpass = bare_libpq / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres.port}:*:{PASSWORD_ROLE}:{PASSWORD}\n")
    pgpass.chmod(0o600)
    assert whoami(postgres.url_for(PASSWORD_ROLE, SUPERUSER)) == PASSWORD_ROLE


def test_the_password_comes_from_a_service_file(
    postgres: PostgresServer, bare_libpq: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = bare_libpq / "services.conf"
    services.write_text(
        f"[lab]\nhost=127.0.0.1\nport={postgres.port}\ndbname={SUPERUSER}\n"
        f"user={PASSWORD_ROLE}\npassword={PASSWORD}\n"
    )
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    assert whoami("postgresql:///?service=lab") == PASSWORD_ROLE


def test_a_fresh_database_is_empty_and_new_each_time(postgres: PostgresServer) -> None:
    first, second = postgres.fresh_database(), postgres.fresh_database()
    assert first != second
    postgres.run_sql("CREATE TABLE sessions (id integer)", url=first)
    tables = (
        "SELECT count(*) FROM pg_tables"
        " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
    )
    assert postgres.run_sql(tables, url=first) == [(1,)]
    assert postgres.run_sql(tables, url=second) == [(0,)]


def test_a_copy_of_a_database_is_its_own_and_goes_when_dropped(postgres: PostgresServer) -> None:
    original = postgres.fresh_database()
    postgres.run_sql("CREATE TABLE sessions (id integer)", url=original)
    copy = postgres.fresh_database(copy_of=original)
    postgres.run_sql("INSERT INTO sessions VALUES (1)", url=copy)
    assert postgres.run_sql("SELECT count(*) FROM sessions", url=original) == [(0,)]
    postgres.drop_database(copy)
    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        postgres.run_sql("SELECT 1", url=copy)


async def test_a_study_of_its_own_is_made_as_the_bot_makes_one(postgres_study: str) -> None:
    """What the contract suite's PostgreSQL tests start from: a study at this schema (a
    console attaches to no other), alone on its database."""
    await (await open_store(postgres_study, access=Access.ATTACH)).close()
    assert await studies_at(postgres_study.split("?")[0]) == [MADE_STUDY]


def test_without_binaries_one_line_says_to_run_the_installer(tmp_path: Path) -> None:
    with pytest.raises(PostgresUnavailable) as raised:
        locate_bin(search_path=str(tmp_path), installed=tmp_path)
    assert str(raised.value).endswith("run .ci/packages")
    assert "\n" not in str(raised.value)


def test_the_highest_installed_version_is_chosen(tmp_path: Path) -> None:
    for version in ("9.6", "15", "13"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    assert locate_bin(search_path=str(tmp_path / "empty"), installed=tmp_path) == (
        tmp_path / "15" / "bin"
    )


OWNER = """
import sys
from tests.postgres_server import PostgresServer
server = PostgresServer(fsync=False)
print(server.port, server.data_dir.parent, flush=True)
sys.stdin.read()
"""


def test_a_killed_test_process_leaves_no_server_behind() -> None:
    command = [sys.executable, "-c", OWNER]
    with subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as owner:
        assert owner.stdout is not None
        port, base = owner.stdout.readline().split()
        postmaster = int((Path(base) / "data" / "postmaster.pid").read_text().split()[0])
        watchdog = int(Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()[1])
        with os.fdopen(os.pidfd_open(watchdog)) as watchdog_ended:
            owner.kill()
            owner.wait(10)
            readable, _, _ = select.select([watchdog_ended], [], [], 60)
    assert readable, "the watchdog outlived its test process by a minute"
    assert not Path(base).exists()
    assert not Path(f"/proc/{postmaster}").exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://ozlab@127.0.0.1:{port}/ozlab", connect_timeout=2).close()


def test_a_stop_that_outlasts_its_wait_leaves_no_process_unreaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tests do not wait for a large cluster's removal; its watchdog is still reaped when
    it ends, rather than dropped running (Python then warns "subprocess … is still running"
    in whichever test collects it, an error under ``-W error``)."""
    server = PostgresServer(fsync=False)
    server.start()
    monkeypatch.setattr(postgres_server, "_STOP_WAIT", 0.0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        server.stop()
        gc.collect()
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)], seen
