"""Taps are honoured only on the message that offered them, through the real bot on the
emulator: an old "Yes, erase" under a prompt answered "No", or a "Yes" forged onto another
message, erases nothing and is answered as a stale tap."""

from __future__ import annotations

import pytest

from bot.pilot.emulator import BotApiEmulator, Participant
from tests.conftest import StartBot, consent, say

pytestmark = pytest.mark.slow

USER_ID = 555_000_222
STALE = "already recorded"


async def still_taking_part(p: Participant) -> None:
    """/help is handled after the tap (one chat, in order): it says where they stand."""
    told = await say(p, "/help")
    assert told.startswith("You are on task 1 of "), told


async def test_an_old_yes_after_no_erases_nothing(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    bot = await start_bot()
    p = emulator.participant(USER_ID)
    await consent(p)
    await p.send_text("/withdraw")
    prompt = await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="No, continue")
    await p.wait_for_text("nothing was erased")
    assert p.bot_message(prompt.message_id).keyboard == []  # answered: its buttons went
    assert await say(p, "still here") != ""

    # The "Yes" an old client still shows under the prompt.
    await p.send_callback("w:y", message_id=prompt.message_id)
    assert STALE in await p.wait_for_toast()
    await still_taking_part(p)
    assert len(bot.participants()) == 1


async def test_a_yes_forged_onto_another_message_erases_nothing(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    bot = await start_bot()
    p = emulator.participant(USER_ID)
    await consent(p)
    brief = p.last_message
    assert brief is not None and "Your task" in brief.text
    await p.send_callback("w:y", message_id=brief.message_id)  # never typed /withdraw
    assert STALE in await p.wait_for_toast()
    await still_taking_part(p)
    assert len(bot.participants()) == 1

    # The real prompt still works, once, and only its own "Yes" erases.
    await p.send_text("/withdraw")
    prompt = await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="Yes, withdraw and erase", message_id=prompt.message_id)
    await p.wait_for_text("You have withdrawn")
    assert bot.participants() == []
