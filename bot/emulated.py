"""The real bot on a study database with the local Bot API emulator in place of Telegram.

``ozlab chat`` (and the tests that restart it) start both here, over loopback HTTP, with no
token from @BotFather: whatever the bot does is what it would do on Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

from bot.app import BotConfig, run_bot
from bot.emulator import BotApiEmulator
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle

_START_TIMEOUT = 30.0


@contextlib.asynccontextmanager
async def emulated_study(
    bundle: StudyBundle, db: Path, *, secret: str, tick_interval: float = 0.5
) -> AsyncIterator[BotApiEmulator]:
    """The emulator and the bot running on ``db`` until the block ends (then both stop)."""
    token = f"{secrets.randbelow(10**9) + 10**9}:emulated-{secrets.token_hex(8)}"
    store = await open_store(db)
    try:
        # Telegram never numbers a bot's updates from 1 again: neither does the emulator.
        emulator = BotApiEmulator(token, first_update_id=await store.highest_update_id() + 1)
        await emulator.start()
    except BaseException:
        await store.close()
        raise
    stop, ready = asyncio.Event(), asyncio.Event()
    config = BotConfig(
        db=db,
        token=token,
        secret=secret,
        bot_api_url=emulator.server_url,
        poll_timeout=1,
        tick_interval=tick_interval,
        pacing=None,  # the emulator is not Telegram: no flood limits to keep
    )
    bot = asyncio.create_task(run_bot(bundle, config, stop=stop, ready=ready, store=store))
    try:
        started = asyncio.create_task(ready.wait())
        await asyncio.wait(
            {bot, started}, timeout=_START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if not started.done():
            started.cancel()
            if bot.done():
                bot.result()  # the bot could not start: its own error says why
            raise TimeoutError(f"the bot did not start within {_START_TIMEOUT:g} s")
        yield emulator
    finally:
        stop.set()
        try:
            await bot
        finally:
            await emulator.stop()
