"""Every way a participant is erased counts their withdrawal the same way: a /withdraw in
the chat, ``ozlab erase`` with no bot running, and ``ozlab erase`` carried out by a running
bot all leave the same anonymous counts per study and per system."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.store.sqlite import open_existing
from scenarios.models import StudyBundle
from tests.conftest import SECRET, StartBot, consent, say
from tests.test_withdrawal_e2e import withdraw

pytestmark = pytest.mark.slow

BY_CHAT, BY_COMMAND, BY_RUNNING_BOT = 602_000_001, 602_000_002, 602_000_003


def per_system(bundle: StudyBundle) -> StudyBundle:
    study = bundle.study.model_copy(update={"withdrawals_by_system": True})
    return bundle.model_copy(update={"study": study})


async def withdrawals(db: Path) -> tuple[tuple[str, str, int], ...]:
    store = await open_existing(db, read_only=True)
    try:
        info = await store.read_snapshot(lambda table, rows: None)
    finally:
        await store.close()
    return info.withdrawals


def expected(study: str, systems: list[str]) -> tuple[tuple[str, str, int], ...]:
    """One withdrawal for the study per person, one per system each person met."""
    counted = Counter({"": len(systems)}) + Counter(systems)
    return tuple((study, system, count) for system, count in sorted(counted.items()))


async def test_a_withdrawal_counts_per_system_whoever_carries_out_the_erasure(
    start_bot: StartBot, emulator: BotApiEmulator, hmd: StudyBundle
) -> None:
    bundle = per_system(hmd)
    bot = await start_bot(bundle, command_interval=0.05)
    for user_id in (BY_CHAT, BY_COMMAND, BY_RUNNING_BOT):
        p = emulator.participant(user_id)
        await consent(p)
        await say(p, f"words of {user_id}")
    privacy = Privacy(SECRET)
    system_of = {row["participant_id"]: row["system_id"] for row in bot.sessions()}
    met = [system_of[privacy.pseudonym(u)] for u in (BY_CHAT, BY_COMMAND, BY_RUNNING_BOT)]

    await withdraw(emulator.participant(BY_CHAT))
    assert await withdrawals(bot.db) == expected(bundle.study.id, met[:1])

    running = ["erase", "--db", str(bot.db), privacy.pseudonym(BY_RUNNING_BOT)]
    assert await asyncio.to_thread(main, running) == 0
    assert await withdrawals(bot.db) == expected(bundle.study.id, [met[0], met[2]])

    await bot.stop()
    alone = ["erase", "--db", str(bot.db), privacy.pseudonym(BY_COMMAND)]
    assert await asyncio.to_thread(main, alone) == 0
    assert await withdrawals(bot.db) == expected(bundle.study.id, met)
