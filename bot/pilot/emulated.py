"""The real bot on a study database with the local Bot API emulator in place of Telegram.

``ozlab chat``, ``ozlab demo`` and ``ozlab pilot`` (and the tests that restart it) start both
here, over loopback HTTP, with no token from @BotFather: whatever the bot does is what it
would do on Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping

from bot.pilot.emulator import BotApiEmulator
from bot.runtime.app import BotConfig, run_bot
from bot.store import StudyStore, open_store
from bot.store.claims import WriterClaim
from bot.store.opening import Database, locate
from bot.systems.base import System
from scenarios.models import StudyBundle

_START_TIMEOUT = 30.0


@contextlib.asynccontextmanager
async def emulated_study(
    bundle: StudyBundle,
    db: Database,
    *,
    secret: str,
    tick_interval: float = 0.5,
    token: str | None = None,
    store: StudyStore | None = None,
    systems: Mapping[str, System] | None = None,
    clock: Callable[[], float] = time.time,
    timer: Callable[[], float] = time.perf_counter,
    writer: WriterClaim | None = None,
    foreign_chats: bool = False,
) -> AsyncIterator[BotApiEmulator]:
    """The emulator and the bot running on ``db`` until the block ends (then both stop).

    A simulation gives its own ``token`` (the same every run), ``store`` (opened on its
    simulated ``clock``; the bot closes it), ``systems`` and ``timer``; otherwise the bot's
    own are used, as ``ozlab run`` would. ``writer``: the writer's lock on ``db`` the caller
    holds already (``bot.store.lock``); without it the bot takes its own. ``foreign_chats``:
    chats sealed under another secret (a demo's, the study's own) are left alone, not
    refused (``BotConfig.foreign_chats``)."""
    token = token or f"{secrets.randbelow(10**9) + 10**9}:emulated-{secrets.token_hex(8)}"
    if store is None:
        store = await open_store(db, clock, study=locate(db).study_or(bundle.study.id))
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
        foreign_chats=foreign_chats,
    )
    bot = asyncio.create_task(
        run_bot(
            bundle,
            config,
            stop=stop,
            ready=ready,
            systems=systems,
            store=store,
            clock=clock,
            timer=timer,
            writer=writer,
        )
    )
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
