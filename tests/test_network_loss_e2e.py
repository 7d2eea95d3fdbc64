"""``ozlab run`` without a network: it waits, tries again less and less often, says so in one
warning line a minute, and answers participants once Telegram can be reached.

It used to end at once with status 1 and some hundred lines of traceback (the bot's first
``getMe`` failed), so a bot started before the Wi-Fi, or during one of Telegram's 502s,
needed a person to start it again.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from aiohttp import web

from bot.pilot.emulator import BotApiEmulator
from tests.conftest import TOKEN
from tests.e2e_support import OzlabProcesses

pytestmark = pytest.mark.slow

WARNING = re.compile(r"^\S+ \S+ WARNING ", re.MULTILINE)


class TelegramDown(BotApiEmulator):
    """The Bot API behind a gateway whose Telegram is down: 502 to every call while
    ``down``, counted in ``refused``."""

    def __init__(self, token: str, *, port: int) -> None:
        super().__init__(token, port=port)
        self.down = True
        self.refused = 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            self.refused += 1
            self._state_waiters.wake()
            return web.Response(status=502, text="<html><h1>502 Bad Gateway</h1></html>")
        return await super()._handle(request)


async def free_port() -> int:
    """A loopback port nothing listens on any more (an emulator held it a moment)."""
    async with BotApiEmulator(TOKEN) as probe:
        return probe.port


async def test_a_bot_started_without_network_answers_once_it_is_back(tmp_path: Path) -> None:
    began = time.monotonic()
    port = await free_port()
    telegram = TelegramDown(TOKEN, port=port)
    processes = OzlabProcesses(telegram, tmp_path)
    try:
        bot = await processes.start(api_url=f"http://127.0.0.1:{port}", wait_ready=False)
        # Nothing listens: the connection is refused.
        await bot.wait_for_log("Telegram cannot be reached (", timeout=20)
        # Then a gateway answers, but its Telegram is still down: 502, twice.
        await telegram.start()
        await telegram.wait_until(lambda t: t.refused >= 2, timeout=30)
        telegram.down = False
        await telegram.wait_until(lambda t: t.requests["getUpdates"] > 0, timeout=30)
        p = telegram.participant(5151)
        await p.send_text("/start")
        await p.wait_for_text("Privacy agreement", timeout=15)
        assert await bot.terminate() == 0
    finally:
        await processes.close()
        await telegram.stop()
    minutes = int((time.monotonic() - began) // 60) + 1
    warnings = WARNING.findall(bot.stderr)
    assert 1 <= len(warnings) <= minutes, bot.stderr
    assert "Traceback" not in bot.stderr
    assert TOKEN not in bot.stderr
    assert " INFO bot.telegram.outage: Telegram reached again after " in bot.stderr
    assert "(failed tries: 3)" in bot.stderr  # refused once, 502 twice: one warning for all


async def test_a_bot_that_loses_the_network_while_running_goes_on_when_it_is_back(
    tmp_path: Path,
) -> None:
    """It logged a warning at every try (every 1, 2, 4 … 30 s, for as long as it lasted)."""
    began = time.monotonic()
    first = BotApiEmulator(TOKEN)
    await first.start()
    processes = OzlabProcesses(first, tmp_path)
    again = TelegramDown(TOKEN, port=first.port)
    try:
        bot = await processes.start()  # polling the first server
        await first.stop()  # the network goes: the long poll is cut, nothing listens
        await bot.wait_for_log(" WARNING ", timeout=30)
        await again.start()  # a gateway answers, its Telegram still down: 502, twice
        await again.wait_until(lambda t: t.refused >= 2, timeout=30)
        again.down = False
        await again.wait_until(lambda t: t.requests["getUpdates"] > 0, timeout=30)
        p = again.participant(5252)
        await p.send_text("/start")
        await p.wait_for_text("Privacy agreement", timeout=15)
        assert await bot.terminate() == 0
    finally:
        await processes.close()
        await again.stop()
    minutes = int((time.monotonic() - began) // 60) + 1
    assert 1 <= len(WARNING.findall(bot.stderr)) <= minutes, bot.stderr
    assert "Traceback" not in bot.stderr and " ERROR " not in bot.stderr
    assert " INFO bot.telegram.outage: Telegram reached again after " in bot.stderr
