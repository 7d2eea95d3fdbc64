"""ozlab's commands as a researcher runs them: each a process of its own, in a shell that has
no ozlab settings and no Telegram token."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.e2e_support import PROJECT_ROOT
from tests.logging_kept import logging_kept


def environment() -> dict[str, str]:
    """A researcher's shell with no ozlab settings and no Telegram token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OZLAB_", "TELEGRAM_"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    return env


def ozlab(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ozlab ARGS`` as a process of its own, as a shell or a script runs it."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def ozlab_here(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``ozlab ARGS`` in this process, for a test of what a command writes rather than of
    the process (its status, signals, logging, file modes): what ``ozlab`` would say, without
    a new interpreter importing pandas and SciPy again. Paths must be absolute. Logging is
    left as it was (a demo sets it up as ``ozlab`` does)."""
    from bot.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), logging_kept():
        status = main(list(map(str, args)))
    return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


_FOREGROUND = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);"
    " os.execv(sys.executable, [sys.executable, *sys.argv[1:]])",
)
"""Python, started as a terminal's foreground command is: with Ctrl-C's default action. A
suite started in the background by a shell without job control (``make test &`` in a
script) has SIGINT ignored, every child inherits that, and Python keeps it ignored."""


async def interrupted_demo(folder: Path) -> tuple[int, str, str]:
    """A long ``ozlab demo`` stopped with Ctrl-C once it says it started: its status and
    what it wrote after that on stdout and on stderr."""
    demo = await asyncio.create_subprocess_exec(
        *_FOREGROUND,
        *("-m", "bot.cli", "demo", "-n", "2000", "--db", str(folder / "d.sqlite")),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=folder,
        env=environment(),
    )
    try:
        assert demo.stdout is not None
        started = await asyncio.wait_for(demo.stdout.readline(), 60)
        assert b"2000 simulated participants" in started
        demo.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(demo.communicate(), 60)
    finally:
        if demo.returncode is None:
            demo.kill()
            await demo.wait()
    assert demo.returncode is not None
    return demo.returncode, out.decode(), err.decode()
