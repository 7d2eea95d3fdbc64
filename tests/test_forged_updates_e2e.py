"""Updates no Telegram client sends, forged by whoever can reach the bot's webhook or its
Bot API server: each is counted and skipped, and changes nothing in anyone's chat."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from scenarios.loading import load_study
from tests.annotating_support import current_item, invite, play, stored
from tests.conftest import StartBot, consent, say

pytestmark = pytest.mark.slow


def forge_tap(
    emulator: BotApiEmulator, stranger: Participant, on: BotMessage, data: str | None
) -> None:
    """A tap by ``stranger`` on a message of another chat, as no Telegram client sends it."""
    query = {
        "id": emulator.new_callback_query(stranger),
        "from": stranger.user,
        "message": on.to_api(),
        "chat_instance": "1",
        "data": data,
    }
    emulator.inject_update("callback_query", query)


async def test_a_tap_from_another_chat_is_never_applied_to_that_chat(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    """In a private chat the chat is the person: a tap whose sender is not the chat's person
    is forged (a stranger tapping "I agree" on Ada's agreement) and must not consent her."""
    bot = await start_bot()
    ada, mallory = emulator.participant(901), emulator.participant(902)
    await ada.send_text("/start")
    agreement = await ada.wait_for_text("Privacy agreement")
    [data] = [data for row in agreement.keyboard for text, data in row if text == "I agree"]
    forge_tap(emulator, mallory, agreement, data)
    # Ada's next message is handled after the forged tap (one chat's updates in order)
    await say(ada, "hello?")
    assert not [m for m in ada.messages if "Your task" in m.text]
    [participant] = bot.participants()
    assert participant["consent"] == "pending", participant
    assert [e["kind"] for e in bot.tables()["events"]].count("update_unreadable") == 1
    await ada.tap(text="I agree")  # her own tap still counts
    await ada.wait_for_text("Your task")


async def test_a_message_from_another_person_in_a_chat_is_skipped(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    ada, mallory = emulator.participant(903), emulator.participant(904)
    await consent(ada)
    forged = {"message_id": 99, "from": mallory.user, "chat": ada.chat, "date": 0}
    emulator.inject_update("message", {**forged, "text": "forged words"})
    await say(ada, "my own words")
    kept = [row["user_text"] for row in bot.exchanges()]
    assert kept == ["my own words"]


async def test_a_tap_from_another_chat_never_rates_for_an_annotator(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """A stranger's forged tap on an annotator's item rates nothing for the annotator."""
    bundle = load_study("hri-cues")
    db = tmp_path / "cues.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "hri-cues", 1)
    ann, mallory = emulator.participant(7400, first_name="Ann"), emulator.participant(7401)
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Exchange 1 of")
    item = current_item(ann)
    assert item is not None
    [four] = [data for row in item.keyboard for text, data in row if text.startswith("4")]
    forge_tap(emulator, mallory, item, four)
    await ann.send_text("/help")  # handled after the forged tap: one chat, in order
    await ann.wait_for_text('You are rating for "HRI CUES')
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert [r for r in ratings if r.annotator == pseudonym] == []
    assert not [m for m in ann.messages if "Exchange 2 of" in m.text]
    await ann.tap(text="4", message_id=item.message_id)  # her own tap still counts
    await ann.wait_for_text("Exchange 2 of")
