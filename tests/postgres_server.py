"""A throw-away PostgreSQL cluster for the tests: real server, loopback only, gone afterwards.

The cluster lives in a fresh temporary directory and runs as an unprivileged user (initdb and
postgres refuse root, and CI runs the tests as root). A small watchdog process owns the server:
it stops it and removes the directory when the test process closes its pipe, which also happens
when the test process is killed outright, so a killed pytest leaves no server behind.
"""

from __future__ import annotations

import atexit
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

SUPERUSER = "ozlab"
# The one role that must give a password: the tests prove credentials come from libpq's
# environment forms (PGPASSWORD, ~/.pgpass, a service file), never from ozlab's arguments.
PASSWORD_ROLE = "ozlab_password"
PASSWORD = "a-test-password-not-a-secret"
INSTALLED = Path("/usr/lib/postgresql")
MISSING = (
    "no PostgreSQL server binaries (initdb) on PATH or in /usr/lib/postgresql/*/bin: "
    "run .ci/packages"
)

HBA = f"""\
local all all trust
host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
"""

# Run by the watchdog process: start postgres, and when the test process's pipe closes (its end,
# or its death) stop postgres and remove the cluster's directory. It ends when postgres ends. It
# ignores Ctrl-C: the test process stops it in order, through the pipe.
WATCHDOG = r"""
import ctypes, os, shutil, signal, subprocess, sys, threading
signal.signal(signal.SIGINT, signal.SIG_IGN)
base, user, command = sys.argv[1], sys.argv[2], sys.argv[3:]

def die_with_watchdog():
    # If the watchdog itself is killed, the kernel sends postgres SIGQUIT (immediate stop).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGQUIT)  # PR_SET_PDEATHSIG

log = open(os.path.join(base, "postgres.log"), "ab")
server = subprocess.Popen(
    command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=base,
    user=user or None, preexec_fn=die_with_watchdog if sys.platform == "linux" else None,
)
closed, ended = threading.Event(), threading.Event()

def stop_when_closed():
    while os.read(0, 4096):
        pass
    closed.set()
    # Immediate shutdown: the cluster is thrown away, so no checkpoint is written first (a
    # fast shutdown's checkpoint of every test's database took over 10 s on a busy machine).
    server.send_signal(signal.SIGQUIT)
    if not ended.wait(30):
        server.kill()

threading.Thread(target=stop_when_closed, daemon=True).start()
server.wait()
ended.set()
if closed.is_set():
    shutil.rmtree(base, ignore_errors=True)
"""


_STOP_WAIT = 0.5
"""Seconds the tests wait for the server to stop and its cluster to be removed before they
leave the watchdog to finish on its own: at the end of a run the removal of a whole suite's
databases took longer than 5 s, and every worker waited those 5 s for nothing."""


COPYING = "FILE_COPY"
"""How a new database copies its template: file by file (between two checkpoints), not
PostgreSQL 15's default of writing each page to the write-ahead log: 12 against 23 ms for
the tests' migrated study (measured, cluster in memory, fsync off)."""


MEMORY = Path("/dev/shm")
"""Linux's memory-backed file system, where a cluster that never syncs is kept."""
ROOM = 2 << 30
"""Bytes free in ``MEMORY`` below which a cluster goes to the temporary directory instead
(a container's is often 64 MB)."""


def cluster_room(fsync: bool) -> Path | None:
    """Where a new cluster's directory goes: in memory when it never syncs and there is room,
    else the temporary directory (None). A database is hundreds of files, made and removed
    at once: on a disk (ext4 with discard, a shared machine) a copy took ten times as long,
    and a cluster that never syncs tests nothing of a disk."""
    if fsync or not os.access(MEMORY, os.W_OK | os.X_OK):
        return None
    return MEMORY if shutil.disk_usage(MEMORY).free >= ROOM else None


class PostgresUnavailable(RuntimeError):
    """The machine has no PostgreSQL server to run, or it would not start: one line says why."""


def locate_bin(search_path: str | None = None, installed: Path = INSTALLED) -> Path:
    """The directory of initdb and postgres: PATH first, then Debian's highest version."""
    found = shutil.which("initdb", path=search_path)
    if found:
        return Path(found).resolve().parent

    def version(directory: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", directory.parent.name))

    candidates = [b for b in installed.glob("*/bin") if (b / "initdb").is_file()]
    if not candidates:
        raise PostgresUnavailable(MISSING)
    return max(candidates, key=version)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_user() -> str | None:
    """The user the cluster runs as: Debian's `postgres` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise PostgresUnavailable(
            "running as root and there is no 'postgres' user to run the server as: run .ci/packages"
        ) from None
    return "postgres"


def quiet_environment() -> dict[str, str]:
    """Our environment without libpq's and the server's PG* settings, which would steer them."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


class PostgresServer:
    """One cluster, started on first use: `url`, `port`, `data_dir`, `bin` all start it.

    `fsync` is on by default, as deployed (the benchmarks); the tests' fixture turns it off.
    """

    def __init__(self, *, fsync: bool = True, start_timeout: float = 60.0) -> None:
        self.fsync = fsync
        self.start_timeout = start_timeout
        self._lock = threading.RLock()
        self._base: Path | None = None
        self._bin: Path | None = None
        self._port = 0
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)
        self._halted = False  # between halt and resume: nothing starts a new cluster
        self._admin: psycopg.Connection[Any] | None = None  # run_sql's, as the superuser

    @property
    def port(self) -> int:
        self.start()
        return self._port

    @property
    def bin(self) -> Path:
        self.start()
        assert self._bin is not None
        return self._bin

    @property
    def data_dir(self) -> Path:
        self.start()
        assert self._base is not None
        return self._base / "data"

    @property
    def url(self) -> str:
        return self.url_for(SUPERUSER, SUPERUSER)

    def url_for(self, user: str, database: str) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def run_sql(
        self, sql: str, params: tuple[Any, ...] = (), *, url: str | None = None
    ) -> list[tuple[Any, ...]]:
        """One statement in autocommit, as the superuser; its rows, if it returns any.
        On the superuser's own database it goes through one kept connection: a new one
        costs the server a process (5 ms of CPU), and every test of a study on PostgreSQL
        makes and drops a database."""
        if url is not None:
            with psycopg.connect(url, autocommit=True) as connection:
                return self._rows(connection, sql, params)
        admin_url = self.url  # first: starting the server runs statements of its own
        with self._lock:
            if self._admin is not None:
                try:
                    return self._rows(self._admin, sql, params)
                except psycopg.OperationalError:
                    if not self._admin.broken:
                        raise  # the statement failed, not the connection
                self._close_admin()  # a server restarted meanwhile closed it
            self._admin = psycopg.connect(admin_url, autocommit=True)
            return self._rows(self._admin, sql, params)

    @staticmethod
    def _rows(
        connection: psycopg.Connection[Any], sql: str, params: tuple[Any, ...]
    ) -> list[tuple[Any, ...]]:
        cursor = connection.execute(sql.encode(), params)  # type: ignore[call-overload]
        return cursor.fetchall() if cursor.description else []

    def _close_admin(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()

    def stored_bytes(self, database_url: str | None = None) -> bytes:
        """Every data file of the database at ``database_url`` (of every database without
        it), once a checkpoint has written out what sat in shared memory (a file the server
        removes meanwhile is left out). One database's files are what can hold a study kept
        in it: reading every test's database too grew with the run, seconds a read."""
        self.run_sql("CHECKPOINT")
        folder = self.data_dir / "base"
        if database_url is not None:
            [(oid,)] = self.run_sql(
                "SELECT oid FROM pg_database WHERE datname = current_database()", url=database_url
            )
            folder = folder / str(oid)
        found = []
        for path in sorted(folder.rglob("*")):
            try:
                found.append(path.read_bytes())
            except (FileNotFoundError, IsADirectoryError):
                continue
        return b"".join(found)

    def fresh_database(self, copy_of: str | None = None) -> str:
        """The URL of a new database: empty (a copy of template0, so nothing leaks in), or a
        copy of the database at ``copy_of``, which nobody may have open."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        template = "template0" if copy_of is None else conninfo_to_dict(copy_of)["dbname"]
        self.run_sql(
            f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY {COPYING} OWNER {SUPERUSER}'
        )
        return self.url_for(SUPERUSER, name)

    def drop_database(self, url: str) -> None:
        """Drop the database at ``url``, once its users have closed their connections: each
        test's database left behind would keep 9 MB of the cluster until the run ends."""
        name = conninfo_to_dict(url)["dbname"]
        self.run_sql(f'DROP DATABASE "{name}"')

    def start(self) -> None:
        with self._lock:
            if self._watchdog is not None or self._halted:
                return
            self._bin = locate_bin()
            user = server_user()
            # A free port can be taken by another process before postgres binds it: try again.
            for attempt in range(5):
                if self._launch(user, last=attempt == 4):
                    break
            self.run_sql(f"CREATE DATABASE {SUPERUSER}", url=self.url_for(SUPERUSER, "postgres"))
            self.run_sql(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")

    def _launch(self, user: str | None, *, last: bool) -> bool:
        """A new cluster, its postgres and watchdog; True once it takes connections."""
        assert self._bin is not None
        room = cluster_room(self.fsync)
        self._base = base = Path(tempfile.mkdtemp(prefix="ozlab-postgres-", dir=room))
        atexit.register(self.stop)
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(base, entry.pw_uid, entry.pw_gid)
        os.chmod(base, 0o700)
        initdb = [
            str(self._bin / "initdb"),
            *("-D", str(base / "data"), "-U", SUPERUSER, "--auth=trust"),
            *("--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"),
        ]
        done = subprocess.run(
            initdb, cwd=base, user=user, env=quiet_environment(), capture_output=True
        )
        if done.returncode != 0:
            self.stop()
            last_line = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise PostgresUnavailable(f"initdb failed: {last_line!r}")
        (base / "data" / "pg_hba.conf").write_text(HBA)
        self._port = free_port()
        self._run_server(base, user)
        return self._taking_connections(last)

    def _run_server(self, base: Path, user: str | None) -> None:
        """postgres on the cluster in ``base``, owned by a new watchdog."""
        assert self._bin is not None
        postgres = [
            str(self._bin / "postgres"),
            *("-D", str(base / "data"), "-p", str(self._port), "-k", str(base)),
            *("-c", "listen_addresses=127.0.0.1", "-c", f"fsync={'on' if self.fsync else 'off'}"),
        ]
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, str(base), user or "", *postgres],
            stdin=subprocess.PIPE,
            env=quiet_environment(),
            start_new_session=True,  # Ctrl-C reaches pytest, which stops the server in order
        )

    def _taking_connections(self, last: bool) -> bool:
        """True once the server takes connections; False when it could not bind its port."""
        assert self._watchdog is not None and self._base is not None
        base = self._base
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            try:
                psycopg.connect(self.url_for(SUPERUSER, "postgres"), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                pass
            try:
                self._watchdog.wait(0.05)  # postgres gave up: the watchdog ended with it
                break
            except subprocess.TimeoutExpired:
                pass
        log = base / "postgres.log"
        lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
        self.stop()
        if last or not any("could not bind" in line for line in lines):
            raise PostgresUnavailable(f"postgres did not start: {(lines or ['?'])[-1]!r}")
        return False

    def halt(self) -> None:
        """Stop the server as an administrator's ``pg_ctl stop -m fast`` does (its clients
        are told it shuts down, their connections closed, a checkpoint written), keeping the
        cluster and its port for :meth:`resume`: half of a restart."""
        with self._lock:
            pid = int(self.data_dir.joinpath("postmaster.pid").read_text().split()[0])
            watchdog, self._watchdog = self._watchdog, None
            assert watchdog is not None and watchdog.stdin is not None, "not started"
            self._halted = True
            self._close_admin()
            os.kill(pid, signal.SIGINT)
            watchdog.wait(self.start_timeout)  # it ends with postgres, leaving the cluster
            watchdog.stdin.close()

    def resume(self) -> None:
        """Start the halted server again on the same cluster and port (the other half)."""
        with self._lock:
            assert self._watchdog is None and self._base is not None, "not halted"
            self._run_server(self._base, server_user())
            self._halted = False
            if not self._taking_connections(last=True):
                raise PostgresUnavailable("postgres did not start again")

    def restart(self) -> None:
        """``pg_ctl restart``: every connection is closed, and the server is back."""
        self.halt()
        self.resume()

    def stop(self) -> None:
        """Stop the server and remove its directory; a second call does nothing."""
        self._close_admin()
        watchdog, self._watchdog = self._watchdog, None
        base, self._base = self._base, None
        atexit.unregister(self.stop)
        if watchdog is not None:
            assert watchdog.stdin is not None
            watchdog.stdin.close()
            try:
                watchdog.wait(_STOP_WAIT)
            except subprocess.TimeoutExpired:
                # The server has its immediate stop; the watchdog removes the cluster (a whole
                # suite's databases take a while on a busy disk) without the tests waiting,
                # and is reaped when it ends (dropped running, Python would warn of it).
                threading.Thread(target=watchdog.wait, name="reaping", daemon=True).start()
                return
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
