"""``ozlab demo``: a whole study played offline by simulated participants.

The emulator stands in for Telegram, the real bot runs against it over loopback HTTP, and
each simulated participant reads and taps like a person. Nothing is mocked: what the demo
leaves in the database is what a real study would leave.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from pathlib import Path

from bot.app import BotConfig, run_bot
from bot.emulator import BotApiEmulator
from bot.errors import StoreError
from bot.simulation.play import Played, StudyPlayer
from bot.store.sqlite import is_study_database
from scenarios.models import StudyBundle

_FIRST_USER_ID = 700_000_000


def clear_demo_database(db: Path) -> None:
    """Replace an earlier demo's database, but never a file that is not an ozlab database."""
    if not db.exists():
        return
    if not is_study_database(db):
        raise StoreError(f"{db} exists and is not an ozlab database; choose another --db")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


async def play_study(
    bundle: StudyBundle, db: Path, *, participants: int, seed: int = 1
) -> list[Played]:
    token = f"{random.Random(seed).randrange(10**9)}:demo-{secrets.token_hex(8)}"
    async with BotApiEmulator(token) as emulator:
        stop, ready = asyncio.Event(), asyncio.Event()
        config = BotConfig(
            db=db,
            token=token,
            secret=secrets.token_urlsafe(32),
            bot_api_url=emulator.server_url,
            poll_timeout=1,
            tick_interval=0.5,
            pacing=None,  # the emulator is not Telegram: no flood limits to keep
        )
        bot = asyncio.create_task(run_bot(bundle, config, stop=stop, ready=ready))
        started = asyncio.create_task(ready.wait())
        await asyncio.wait({bot, started}, return_when=asyncio.FIRST_COMPLETED)
        if bot.done():
            started.cancel()
            bot.result()
        try:
            return list(
                await asyncio.gather(
                    *(
                        StudyPlayer(
                            emulator.participant(_FIRST_USER_ID + i, first_name=f"Sim{i}"),
                            bundle,
                            random.Random(seed * 10_007 + i),
                        ).play()
                        for i in range(participants)
                    )
                )
            )
        finally:
            stop.set()
            await bot
