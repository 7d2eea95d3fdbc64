"""Designs through the real bot: participants who consent at the same moment still fill
the cells of a balanced design evenly, and the stored assignment names its design."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from bot.pilot.emulator import BotApiEmulator
from scenarios.models import Design, StudyBundle
from tests.conftest import StartBot, consent

pytestmark = pytest.mark.slow


async def test_simultaneous_arrivals_fill_a_balanced_design_evenly(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    study = hmd.study.model_copy(update={"design": Design(type="balanced", seed=3)})
    bot = await start_bot(hmd.model_copy(update={"study": study}))
    await asyncio.gather(*(consent(emulator.participant(900 + i)) for i in range(10)))
    sessions = bot.sessions()
    counts = Counter(s["system_id"] for s in sessions)
    assert counts == {"shop-v0": 5, "shop-v1": 5}
    designs = {s["design"] for s in sessions}
    assert designs == {"balanced/between"}
