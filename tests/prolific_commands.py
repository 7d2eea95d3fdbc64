"""``ozlab prolific`` as a researcher's shell runs it, against the local Prolific
(``tests/fake_prolific.py``): to its end, or killed (SIGKILL) while the platform holds a
request."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from bot.core.privacy import SECRET_ENV
from tests.command_line import environment
from tests.fake_prolific import TOKEN, FakeProlific


def _argv(args: tuple[str | Path, ...], url: str) -> list[str]:
    return ["-m", "bot.cli", "prolific", *map(str, args), "--api-url", url]


def prolific(
    *args: str | Path, url: str, secret: str, token: str = TOKEN
) -> subprocess.CompletedProcess[str]:
    """``ozlab prolific ARGS`` with the study's secret and a token in the environment."""
    env = {**environment(), SECRET_ENV: secret, "PROLIFIC_TOKEN": token}
    return subprocess.run(
        [sys.executable, *_argv(args, url)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def killed_when_hanging(fake: FakeProlific, *args: str | Path, url: str, secret: str) -> None:
    """``ozlab prolific ARGS`` killed (SIGKILL) once the platform holds its request."""
    env = {**environment(), SECRET_ENV: secret, "PROLIFIC_TOKEN": TOKEN}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *_argv(args, url),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    await asyncio.wait_for(fake.hanging.wait(), 120)
    process.kill()
    await process.wait()
    fake.hanging.clear()
