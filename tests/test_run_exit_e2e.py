"""``ozlab run`` ends with a non-zero status when it cannot go on, so that a supervisor
(systemd's ``Restart=on-failure``, a container's restart policy) sees it and starts it
again: one of ozlab's own errors exits with its status and one line, anything else with 1
and its traceback through the redacting log handler. Against the Bot API emulator, as a
researcher runs it (a process of its own)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from bot.cli import TOKEN_ENV
from bot.core.errors import TelegramSetupError
from bot.pilot.emulator import BotApiEmulator
from tests.conftest import TOKEN, consent
from tests.e2e_support import SECRET_32, OzlabProcesses

pytestmark = pytest.mark.slow


async def test_a_token_revoked_while_the_bot_runs_ends_it_with_7(
    emulator: BotApiEmulator, ozlab: OzlabProcesses
) -> None:
    bot = await ozlab.start()
    p = emulator.participant(6161)
    await consent(p)
    emulator.token = "123456789:AAE-a-new-token-after-revoke-0123456789"  # /revoke at BotFather
    await p.send_text("are you still there?")  # answers the long poll; the next is refused
    code = await asyncio.wait_for(bot.finish(), 30)
    assert code == TelegramSetupError.exit_code == 7
    assert bot.stderr.splitlines()[-1] == (
        f"ozlab: Telegram did not accept the bot token, or {emulator.server_url} is not a Bot"
        f" API server: check {TOKEN_ENV} and --bot-api-url"
    )
    assert "Traceback" not in bot.stderr


class UpdatesBeyondAnyInteger(BotApiEmulator):
    """A Bot API server that numbers its updates past what a 64-bit integer holds (Telegram's
    stay far below)."""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        response = await super()._handle(request)
        if request.match_info.get("method", "").lower() != "getupdates":
            return response
        assert isinstance(response, web.Response) and isinstance(response.body, bytes)
        answer = json.loads(response.body)
        for update in answer.get("result", []):
            update["update_id"] += 2**64
        return web.json_response(answer)


async def test_updates_numbered_beyond_any_integer_are_skipped_and_the_bot_runs_on(
    tmp_path: Path,
) -> None:
    """It used to crash on storing the id, and again after every restart (the offset never
    moved past it): now the update is confirmed, counted and skipped like any unreadable one."""
    async with UpdatesBeyondAnyInteger(TOKEN) as emulator:
        processes = OzlabProcesses(emulator, tmp_path)
        try:
            bot = await processes.start()
            first = await emulator.participant(6262).send_text("/start")
            await emulator.wait_until(lambda e: e.confirmed_offset > first + 2**64)
            code = await bot.terminate()
        finally:
            await processes.close()
    assert code == 0
    assert [e["kind"] for e in processes.events("update_unreadable")] == ["update_unreadable"]


class NotAnApi(BotApiEmulator):
    """A Bot API server behind a proxy that answers its first call with a web page (a lost
    network, a 502, is waited out instead: tests/test_network_loss_e2e.py)."""

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.match_info.get("method", "").lower() == "deletewebhook":
            return web.Response(status=200, text="<html>Welcome to nginx!</html>")
        return await super()._handle(request)


async def test_a_crash_while_running_ends_the_bot_with_1_and_a_redacted_traceback(
    tmp_path: Path,
) -> None:
    async with NotAnApi(TOKEN) as emulator:
        processes = OzlabProcesses(emulator, tmp_path)
        try:
            bot = await processes.start(wait_ready=False)
            code = await asyncio.wait_for(bot.finish(), 30)
        finally:
            await processes.close()
    assert code == 1
    reason = [line for line in bot.stderr.splitlines() if " CRITICAL ozlab: " in line]
    assert len(reason) == 1 and " CRITICAL ozlab: ozlab stopped: " in reason[0], bot.stderr
    assert "Traceback (most recent call last)" in bot.stderr
    assert TOKEN not in bot.stderr and SECRET_32 not in bot.stderr
