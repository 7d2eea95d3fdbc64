"""ozlab's commands as a researcher runs them against a server: each a process of its own, in
a shell without libpq's PG* settings or ozlab's, and what a test reads from what they said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.command_line import environment

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
    """``ozlab report --format json`` (``db`` None: from ``OZLAB_DB``), without its
    "source" (the database it read)."""
    named = ("--db", db) if db is not None else ()
    numbers = json.loads(ok(ozlab("report", *named, "--format", "json", *extra, cwd=cwd, env=env)))
    assert isinstance(numbers, dict)
    numbers.pop("source")
    return numbers
