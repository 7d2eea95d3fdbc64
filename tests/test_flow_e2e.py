"""A participant's whole study, through python-telegram-bot, loopback HTTP and the emulator."""

from __future__ import annotations

import asyncio
import re

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.pilot.emulator import BotApiEmulator
from bot.systems.demo import ALEX_WISHLIST
from tests.conftest import StartBot, consent, say
from tests.storage_probe import sealed_payloads
from tests.store_reads import pick

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("system", "receiving", "stored_in"),
    [
        ("shop-v1", "polling", "sqlite"),
        ("shop-v0", "polling", "sqlite"),
        ("shop-v1", "webhook", "sqlite"),
        ("shop-v1", "webhook", "postgresql"),
    ],
)
async def test_the_whole_hmd_study(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd,
    system: str,
    receiving: str,
    stored_in: str,
) -> None:
    only = hmd.model_copy(
        update={
            "study": hmd.study.model_copy(
                update={"systems": tuple(s for s in hmd.study.systems if s.id == system)}
            )
        }
    )
    bot = await start_bot(only)
    p = emulator.participant(501)
    await consent(p)
    assert "Alex" in p.messages[-1].text and "Finish task" in p.messages[-1].buttons
    reply = await say(p, "Hi! I need adventure games for Linux")
    assert "typing" not in p.chat_actions  # the shop answers at once: no "typing…" needed
    titles = re.findall(r"^\d+\. (.+?),", reply, re.MULTILINE)
    assert titles, reply
    on_alex = await say(p, f"Is {titles[0]} on Alex's wishlist?")
    assert titles[0] in on_alex
    gift = next(t for t in titles if t not in ALEX_WISHLIST)
    await say(p, f"add {gift} to my wishlist")
    item = await p.wait_for_text("1/5")
    assert "Understanding" in item.text
    for expected, label in ((2, "Agree"), (3, "Neutral"), (4, "Completely agree"), (None, "Agree")):
        await p.tap(text=f"{ {'Agree': 4, 'Neutral': 3, 'Completely agree': 5}[label] } · {label}")
        if expected is not None:
            await p.wait_for_text(f"{expected}/5")
    comment = await p.wait_for_text("Additional comments")
    assert comment.message_id == item.message_id  # one message, edited in place
    await p.send_text("Nice and quick.")
    await p.wait_for_text("Thank you for taking part")

    [(session_id, system_id, state, reason, success)] = pick(
        bot.sessions(), "session_id", "system_id", "state", "end_reason", "success"
    )
    assert (system_id, state, reason, success) == (system, "ended", "success", 1)
    exchanges = bot.exchanges()
    assert [row["turn"] for row in exchanges] == [1, 2, 3]
    assert all(row["system_text"] is not None for row in exchanges)
    assert exchanges[0]["user_text"] == "Hi! I need adventure games for Linux"
    responses = pick(bot.responses(), "item_id", "value", "label", "text", "status")
    assert responses == [
        ("hmd.understanding", 4, "Agree", None, "answered"),
        ("hmd.management", 3, "Neutral", None, "answered"),
        ("hmd.generation", 5, "Completely agree", None, "answered"),
        ("hmd.usefulness", 4, "Agree", None, "answered"),
        ("hmd.comment", None, None, "Nice and quick.", "answered"),
    ]
    [(consent_state, participant_id)] = pick(bot.participants(), "consent", "participant_id")
    assert consent_state == "accepted" and session_id.startswith(participant_id)
    assert str(p.user_id) not in participant_id
    if receiving == "webhook":  # every update posted once and taken at once; no polling
        assert emulator.requests["getUpdates"] == 0 and emulator.webhook is not None
        assert {status for _, status in emulator.webhook.answers} == {200}
        assert len(emulator.webhook.answers) == len(emulator.created_times)
    else:
        assert emulator.webhooks_set == 0


async def test_declining_stores_nothing_but_the_decline(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    p = emulator.participant(502, first_name="Grace", username="grace_h")
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I do not agree")
    await p.wait_for_text("thank you for your time")
    await bot.stop()  # the sealed chat id lives only until the answers are delivered
    assert pick(bot.participants(), "consent") == [("declined",)]
    assert [p.chat_key for p in bot.resumed("hmd")] == [None]
    stored = bot.tables()
    for table in ("sessions", "exchanges", "responses", "events"):
        assert stored[table] == [], table
    assert sealed_payloads(bot.db) == 0


async def test_wrong_input_gets_a_polite_answer_and_keeps_the_place(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    p = emulator.participant(503)
    await consent(p)
    await p.send_sticker()
    await p.wait_for_text("text messages only")
    await p.send_photo()
    await p.wait_for_text("text messages only")
    await p.send_voice()
    await p.wait_for_text("text messages only")
    first = await say(p, "show me adventure games for linux")
    await p.edit_text(p.user_messages and max(p.user_messages), "show me strategy games")
    await p.wait_for_text("Edited messages are not passed on")
    await p.send_text("/start")
    await p.wait_for_text("Welcome back")
    await p.wait_for_text("Your task")
    assert "1." in first
    stored = bot.tables()
    assert len(stored["exchanges"]) == 1
    assert len(stored["sessions"]) == 1


async def test_old_and_repeated_buttons_store_one_answer(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    p = emulator.participant(504)
    await consent(p)
    brief = p.messages[-1]
    await p.tap(text="Finish task", message_id=brief.message_id)
    item = await p.wait_for_text("1/5")
    [first_button] = [data for row in item.keyboard for label, data in row if label.startswith("2")]
    await p.send_callback(first_button, message_id=item.message_id)
    await p.send_callback(first_button, message_id=item.message_id)  # a quick double tap
    await p.wait_for_toast("already recorded")
    await p.wait_for(lambda q: not brief.buttons)  # the task is over: its button is gone
    await p.send_callback("done", message_id=brief.message_id)  # tapped before it went
    await p.wait_for(lambda q: q.toasts.count("Your answer was already recorded.") >= 2)
    await p.send_callback("a:999:3", message_id=item.message_id)  # tampered
    await p.wait_for(lambda q: q.toasts.count("Your answer was already recorded.") >= 3)
    assert pick(bot.responses(), "item_id", "value") == [("hmd.understanding", 2)]
    assert len(p.callback_answers) == 6  # every tap was answered, consent included


async def test_groups_and_other_bots_are_ignored(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bot = await start_bot()
    await emulator.group_message(-100123, 505, "/start")
    await emulator.bot_message(506, "/start")
    p = emulator.participant(507)
    await p.send_text("/start")  # a private chat after them: handled, so they were too
    await p.wait_for_text("Privacy agreement")
    assert emulator.requests["sendMessage"] == 2  # welcome and agreement, for 507 only
    assert len(bot.participants()) == 1


class Thoughtful:
    """A system that takes a noticeable moment (until the test lets it answer)."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def respond(self, conversation: Conversation) -> SystemReply:
        await self.go.wait()
        return SystemReply(("Here you are.",))

    async def close(self) -> None:
        pass


async def test_typing_shows_while_a_system_takes_its_time(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    system = Thoughtful()
    await start_bot(systems={"shop-v1": system, "shop-v0": system})
    p = emulator.participant(509)
    await consent(p)
    await p.send_text("anything?")
    await p.wait_for(lambda q: "typing" in q.chat_actions)
    assert not p.messages[-1].text.startswith("Here")
    system.go.set()
    await p.wait_for_text("Here you are.")


class Verbose:
    """A system whose replies are longer than one Telegram message."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply(("*" + "word " * 2000 + "_end_",))

    async def close(self) -> None:
        pass


async def test_a_reply_longer_than_telegram_allows_is_split(
    emulator: BotApiEmulator, start_bot: StartBot, hmd
) -> None:
    bot = await start_bot(systems={"shop-v1": Verbose(), "shop-v0": Verbose()})
    p = emulator.participant(508)
    await consent(p)
    before = len(p.messages)
    await p.send_text("tell me everything")
    await p.wait_for_text("_end_")
    parts = [m.text for m in p.messages[before:]]
    assert len(parts) == 3 and all(len(t) <= 4096 for t in parts)
    [(stored,)] = pick(bot.exchanges(), "system_text")
    assert stored.startswith("*") and stored.endswith("_end_") and len(stored) == 10006
