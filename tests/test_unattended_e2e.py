"""Unattended running through python-telegram-bot and the emulator: what Telegram (or a self-hosted
Bot API server) sends can neither stop nor silence the bot."""

from __future__ import annotations

import logging
import re

import pytest

from bot.pilot.emulator import BotApiEmulator
from tests.conftest import StartBot, consent
from tests.store_reads import pick

pytestmark = pytest.mark.slow


def old_server_poll(emulator: BotApiEmulator, user_id: int) -> dict[str, object]:
    """A poll as a Bot API server older than 9.6 sends it: options without persistent_id,
    which python-telegram-bot 22.8 cannot read."""
    p = emulator.participant(user_id, first_name="Ada", username="ada_lovelace")
    message = p._message({})
    message["poll"] = {
        "id": "5",
        "question": "Lunch?",
        "options": [{"text": "yes", "voter_count": 0}, {"text": "no", "voter_count": 0}],
        "total_voter_count": 0,
        "is_closed": False,
        "is_anonymous": True,
        "type": "regular",
        "allows_multiple_answers": False,
    }
    return message


async def test_an_update_the_library_cannot_read_is_answered_like_any_other(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    """python-telegram-bot 22.8 refuses this poll (it stopped the bot, on every restart):
    ozlab reads updates itself, so it is a message like another (here: a first contact)."""
    await start_bot()
    emulator.inject_update("message", old_server_poll(emulator, 603))
    await emulator.participant(603).wait_for_text("Privacy agreement")


async def test_an_update_that_is_not_one_is_confirmed_counted_and_skipped(
    emulator: BotApiEmulator, start_bot: StartBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bot = await start_bot()
    before = emulator.participant(601)
    after = emulator.participant(602)
    await before.send_text("/start")
    sender = {"id": 604, "is_bot": False, "first_name": "Ada", "username": "ada_lovelace"}
    broken = {"message_id": 9, "date": 0, "chat": "not a chat", "from": sender, "text": "hi"}
    bad = emulator.inject_update("message", broken)
    await after.send_text("/start")  # in the same batch or the next: handled either way
    await before.wait_for_text("Privacy agreement")
    await after.wait_for_text("Privacy agreement")
    await emulator.wait_until(lambda e: e.confirmed_offset > bad)
    await bot.stop()
    [(data,)] = pick(bot.events("update_unreadable"), "data")
    assert f'"update_id": {bad}' in data and "Ada" not in data
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "ada_lovelace" not in logged and "Ada" not in logged
    # the raw id as a number: not as three digits inside another id (a scheduler job's hex)
    assert not re.search(r"\b604\b", logged), logged
    # Restarting does not bring it back: it was confirmed, and the bot answers again.
    await start_bot()
    await before.send_text("/start")
    await before.wait_for_text("Privacy agreement")


async def test_the_same_update_twice_in_one_batch_is_handled_once(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    p = emulator.participant(611)
    await consent(p)
    await bot.stop()
    before = len(p.messages)
    update_id = await p.send_text("adventure games for Linux")
    # A proxy or a self-hosted server hands the same update out twice in one answer.
    emulator.queue._pending.append(update_id)
    bot = await start_bot()
    await p.wait_for(lambda q: len(q.messages) > before)
    await emulator.wait_until(lambda e: e.confirmed_offset > update_id)
    await bot.stop()
    assert len(bot.exchanges()) == 1
    assert len(p.messages) == before + 1  # one reply, not two


async def test_no_button_is_left_on_screen_that_does_nothing(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    await start_bot()
    p = emulator.participant(621)
    await p.send_text("/start")
    agreement = await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    brief = await p.wait_for_text("Your task")
    await p.wait_for(lambda q: not agreement.buttons)
    assert "Finish task" in brief.buttons
    await p.tap(text="Finish task")
    await p.wait_for_text("1/5")
    await p.wait_for(lambda q: not brief.buttons)
