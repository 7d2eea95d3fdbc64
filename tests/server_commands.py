"""ozlab's commands as a researcher runs them against a server: each a process of its own, in
a shell without libpq's PG* settings or ozlab's, and what a test reads from what they said."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.command_line import environment, ozlab_here

EPOCH = "1700000000"


def ozlab(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``ozlab ARGS`` in a process of its own, in a shell without PG* or ozlab settings
    (plus ``env``), reports dated by ``SOURCE_DATE_EPOCH`` so that two are comparable."""
    shell = {k: v for k, v in environment().items() if not k.startswith("PG")}
    shell["SOURCE_DATE_EPOCH"] = EPOCH
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        cwd=cwd,
        env=shell | (env or {}),
        capture_output=True,
        text=True,
        timeout=180,
    )


@contextlib.contextmanager
def _shell(env: dict[str, str] | None) -> Iterator[None]:
    """This process's environment as :func:`ozlab` gives a command's, put back afterwards."""
    kept = dict(os.environ)
    for name in [k for k in os.environ if k.startswith(("PG", "OZLAB_", "TELEGRAM_"))]:
        del os.environ[name]
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(kept)


def here(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``ozlab ARGS`` run in this process, in the environment :func:`ozlab` gives a process:
    for what a command writes or stores, not for its status, credentials or process (a
    new interpreter imports pandas and SciPy again, seconds each time). Paths absolute.
    Called from a test's event loop, the command runs on a thread of its own (it may start
    an event loop of its own), the test's loop waiting."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _here(args, env)
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(_here, args, env).result()


def _here(
    args: tuple[str | Path, ...], env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    with _shell(env):
        return ozlab_here(*args)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout


def one_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    """A refusal as the house has it: its status, one line on stderr, no traceback."""
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def report(
    db: str | Path | None, cwd: Path, *extra: str, env: dict[str, str] | None = None
) -> dict[str, object]:
    """``ozlab report --format json`` in a process of its own (``db`` None: from
    ``OZLAB_DB``), without its "source" (the database it read)."""
    named = ("--db", db) if db is not None else ()
    return _numbers(ok(ozlab("report", *named, "--format", "json", *extra, cwd=cwd, env=env)))


def numbers(
    db: str | Path | None, *extra: str, env: dict[str, str] | None = None
) -> dict[str, object]:
    """What :func:`report` gives, the report made in this process (see :func:`here`)."""
    named = ("--db", db) if db is not None else ()
    return _numbers(ok(here("report", *named, "--format", "json", *extra, env=env)))


def _numbers(said: str) -> dict[str, object]:
    found = json.loads(said)
    assert isinstance(found, dict)
    found.pop("source")
    return found
