"""``ozlab run`` stopped by what it meets at start-up, against the Bot API emulator: one line
on stderr and the exit status of its kind (``bot/core/errors.py``)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bot.cli import SECRET_ENV, TOKEN_ENV
from bot.core.errors import StoreError, TelegramSetupError
from bot.pilot.emulator import BotApiEmulator
from tests.conftest import consent
from tests.e2e_support import OzlabProcesses

pytestmark = pytest.mark.slow


async def run_until_it_stops(ozlab: OzlabProcesses, api_url: str, **env: str) -> tuple[int, str]:
    """``ozlab run hmd`` on the study database with ``env`` over the usual variables."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bot.cli", "run", "hmd", "--db", str(ozlab.db), "--bot-api-url", api_url),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=ozlab.workdir,
        env={**ozlab.env(), **env},
    )
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, err.decode()


async def test_a_server_that_is_not_a_bot_api_exits_7(
    emulator: BotApiEmulator, ozlab: OzlabProcesses
) -> None:
    url = f"{emulator.server_url}/not-the-api"
    code, err = await run_until_it_stops(ozlab, url)
    assert code == TelegramSetupError.exit_code == 7
    assert err.splitlines()[-1] == (  # after the start-up's log lines
        f"ozlab: Telegram did not accept the bot token, or {url} is not a Bot API server:"
        f" check {TOKEN_ENV} and --bot-api-url"
    )
    assert "Traceback" not in err


async def test_a_restart_with_another_secret_exits_5(
    emulator: BotApiEmulator, ozlab: OzlabProcesses
) -> None:
    """The participants' chat ids were sealed with the first secret: the bot cannot reach
    them with another one, and must not start as if they were new people."""
    bot = await ozlab.start()
    await consent(emulator.participant(4242))
    assert await bot.terminate() == 0
    code, err = await run_until_it_stops(
        ozlab, emulator.server_url, **{SECRET_ENV: "another-secret-of-32-characters!"}
    )
    assert code == StoreError.exit_code == 5
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"ozlab: this database's chat ids were sealed with another {SECRET_ENV}: run with the"
        " secret the study started with"
    )
