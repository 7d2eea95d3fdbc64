"""A new emulator on an old database: the bot hears the new participant.

The emulator numbers its updates from 1 each time it starts; the bot's inbox keeps the ids it
has handled. Before the emulator went on from the database's highest id, the second run's
first update (id 1 again) was taken for one already handled, and the bot said nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.pilot.emulated import emulated_study
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle
from tests.conftest import SECRET, TOKEN

pytestmark = pytest.mark.slow


async def test_a_new_emulator_on_an_old_database_is_heard(tmp_path: Path, hmd: StudyBundle) -> None:
    db = tmp_path / "pilot.sqlite"
    for user in (801, 802, 803):
        async with emulated_study(hmd, db, secret=SECRET, tick_interval=0.05) as emulator:
            p = emulator.participant(user)
            await p.send_text("/start")
            await p.wait_for_text("Privacy agreement", timeout=10)
            await p.tap(text="I agree")
            await p.wait_for_text("Your task", timeout=10)


async def test_the_emulator_numbers_on_from_where_it_is_told() -> None:
    async with BotApiEmulator(TOKEN, first_update_id=42) as emulator:
        assert await emulator.participant(804).send_text("/start") == 42
        assert await emulator.participant(805).send_text("/start") == 43
    with pytest.raises(ValueError, match="start at 1 or more"):
        BotApiEmulator(TOKEN, first_update_id=0)
