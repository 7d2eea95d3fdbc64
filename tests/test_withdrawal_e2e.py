"""A participant withdraws (GDPR art. 17) through the real bot on the emulator: everything of
theirs leaves the file's bytes (main, WAL, shared memory), an anonymous count remains, and a
later /start begins as a new participant."""

from __future__ import annotations

import pytest

from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store.sqlite import open_existing
from tests.conftest import SECRET, StartBot, consent, say
from tests.e2e_support import database_bytes

pytestmark = pytest.mark.slow

USER_ID = 555_000_111
TYPED = "quixotic zeppelin marmalade"
KEPT = "ordinary tangerine question"


async def withdraw(p: Participant) -> None:
    await p.send_text("/withdraw")
    await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="Yes, withdraw and erase")
    await p.wait_for_text("You have withdrawn")


async def test_withdrawal_mid_dialogue_leaves_nothing_in_the_file(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    bot = await start_bot()
    other = emulator.participant(USER_ID + 1)
    await consent(other)
    await say(other, KEPT)
    p = emulator.participant(USER_ID)
    await consent(p)
    await say(p, TYPED)
    pseudonym = Privacy(SECRET).pseudonym(USER_ID)
    assert pseudonym.encode() in database_bytes(bot.db)

    await withdraw(p)

    blob = database_bytes(bot.db)
    assert TYPED.encode() not in blob
    assert pseudonym.encode() not in blob
    assert KEPT.encode() in blob  # the other participant keeps everything
    assert {row["participant_id"] for row in bot.sessions()} == {
        Privacy(SECRET).pseudonym(USER_ID + 1)
    }
    store = await open_existing(bot.db, read_only=True)
    try:
        info = await store.read_snapshot(lambda table, rows: None)
    finally:
        await store.close()
    assert info.withdrawals == (("hmd", "", 1),)

    # /start again: a new participant, from the agreement on.
    await consent(p)
    assert len({row["participant_id"] for row in bot.sessions()}) == 2


async def test_withdrawal_can_be_cancelled_and_works_in_every_phase(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    bot = await start_bot()
    before = emulator.participant(USER_ID)  # during consent: nothing of theirs is kept yet
    await before.send_text("/start")
    await before.wait_for_text("Privacy agreement")
    await withdraw(before)

    p = emulator.participant(USER_ID + 2)
    await consent(p)
    await p.send_text("/withdraw")
    await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="No, continue")
    await p.wait_for_text("nothing was erased")
    assert await say(p, "still here") != ""

    await p.tap(text="Finish task")  # the questionnaire
    await p.wait_for_text("Please rate the conversation")
    await withdraw(p)
    assert bot.participants() == []

    stranger = emulator.participant(USER_ID + 3)
    await stranger.send_text("/withdraw")
    await stranger.wait_for_text("Nothing about you is stored")


async def test_the_command_menu_and_help_say_where_the_participant_stands(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    await start_bot()
    menu = emulator.commands[('{"type": "default"}', "")]
    assert [c["command"] for c in menu] == ["help", "done", "withdraw"]
    p = emulator.participant(USER_ID)
    assert (await say(p, "/help")).startswith("Send /start")
    await consent(p)
    told = await say(p, "/help")
    assert told.startswith("You are on task 1 of ")
    assert "/withdraw" in told


async def test_the_agreement_names_the_right_to_withdraw(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    await start_bot()
    p = emulator.participant(USER_ID)
    await p.send_text("/start")
    agreement = await p.wait_for_text("Privacy agreement")
    assert "/withdraw" in agreement.text
