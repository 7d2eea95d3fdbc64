"""The console and the real bot, meeting only in the database: replies edited and written
by wizards reach participants, commands survive a stopped bot, gates send by themselves,
lab sessions start when the experimenter says so."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import TextArea

from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent
from tests.storage_probe import command_log
from tests.store_reads import pick
from tests.test_wizard_app import app_of, console, shows, status, transcript
from tests.test_wizard_cli import ozlab_wizard
from tests.test_wizard_desk import session_of, shop, until, woz

pytestmark = pytest.mark.slow


async def test_a_gated_reply_edited_in_the_console_reaches_the_participant_as_edited(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(901)
    await consent(p)
    async with console(bot.db, "ada") as pilot:
        app = app_of(pilot)
        session = await shows(pilot, lambda: app.selected)
        await pilot.press("g", "1", "enter")  # this session, no auto-send
        await shows(pilot, lambda: f"gate session:{session}: applied" in status(pilot))
        await p.send_text("adventure games for Linux")
        waiting = await shows(pilot, lambda: app.waiting.get(session))
        assert waiting.message == "adventure games for Linux" and waiting.proposed
        await pilot.press("e")
        editor = app.screen.query_one(TextArea)
        assert editor.text == "\n\n".join(waiting.proposed)  # pre-filled with the system's
        await pilot.press("f7", *"Try Lantern Road", "ctrl+s")
        await p.wait_for_text("Try Lantern Road")
        await shows(pilot, lambda: "edited reply: applied" in status(pilot))
        await shows(pilot, lambda: "Try Lantern Road" in transcript(pilot))
        [line] = [x for x in app.log_view.shown if x.who == "edited"]
        assert (line.wizard, line.original) == ("ada", "\n\n".join(waiting.proposed))
    assert not any("adventure games for Linux:" in m.text for m in p.messages)
    assert [
        (x.system_text, x.original_text, x.source, x.wizard) for x in bot.transcript_exchanges()
    ] == [("Try Lantern Road", "\n\n".join(waiting.proposed), "edited", "ada")]


async def test_a_wizard_type_system_is_played_entirely_from_the_console(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(woz(hmd), command_interval=0.05)
    p = emulator.participant(902)
    await consent(p)
    async with console(bot.db, "ada") as pilot:
        app = app_of(pilot)
        session = await shows(pilot, lambda: app.selected)
        for message, answer in (("Hello?", "Hi there"), ("A game for Alex", "Lantern Road")):
            await p.send_text(message)
            await shows(pilot, lambda: session in app.waiting)
            await pilot.press("a")  # nothing to send as is: the wizard writes it
            assert "r writes the reply" in status(pilot)
            await pilot.press("j", "r", *answer, "enter")
            await p.wait_for_text(answer)
            await shows(pilot, lambda: "reply: applied" in status(pilot))
        await shows(pilot, lambda: "Lantern Road" in transcript(pilot))
    assert [
        (x.user_text, x.system_text, x.source, x.wizard) for x in bot.transcript_exchanges()
    ] == [
        ("Hello?", "Hi there", "wizard", "ada"),
        ("A game for Alex", "Lantern Road", "wizard", "ada"),
    ]
    # Two wizards answer the same turn at once: the first one written wins.
    await p.send_text("Thanks!")
    async with await Desk.open(bot.db, "ada") as ada, await Desk.open(bot.db, "grace") as grace:
        await until(ada.waiting_replies)
        written = await asyncio.gather(
            ada.command("reply", session, action="replace", text="From Ada"),
            grace.command("reply", session, action="replace", text="From Gr"),
        )
        outcomes = [await until(lambda i=i: ada.outcome(i)) for i in written]
    assert sorted(outcomes) == ["applied", "expired"]
    winner = "From Ada" if outcomes[0] == "applied" else "From Gr"
    loser = "From Gr" if winner == "From Ada" else "From Ada"
    await p.wait_for_text(winner)
    assert not any(loser in m.text for m in p.messages)
    assert [x["system_text"] for x in bot.exchanges() if x["turn"] == 3] == [winner]


async def test_commands_written_while_the_bot_is_stopped_are_applied_once_after_it_returns(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bundle = shop(hmd)
    bot = await start_bot(bundle, command_interval=0.05)
    p = emulator.participant(903)
    await consent(p)
    async with await Desk.open(bot.db, "ada") as desk:
        session = await until(lambda: session_of(desk))
        await bot.stop()
        waiting = await desk.command("say", session, text="Back in a moment")
        assert await desk.outcome(waiting) is None
        bot = await start_bot(bundle, db=bot.db, command_interval=0.05)
        await p.wait_for_text("Back in a moment")
        assert await until(lambda: desk.outcome(waiting)) == "applied"
        marker = await desk.command("say", session, text="marker")
        await p.wait_for_text("marker")  # commands go in order: a repeat would come first
        assert await until(lambda: desk.outcome(marker)) == "applied"
        assert [m.text for m in p.messages].count("Back in a moment") == 1
        ended = await desk.command("end", session, reason="room closes")
        assert await until(lambda: desk.outcome(ended)) == "applied"
        await p.wait_for_text("1/5")
        await bot.stop()
        late = await desk.command("say", session, text="too late")
        await start_bot(bundle, db=bot.db, command_interval=0.05)
        assert await until(lambda: desk.outcome(late)) == "expired"
    assert not any("too late" in m.text for m in p.messages)
    assert pick(command_log(bot.db), "kind", "outcome") == [
        ("say", "applied"),
        ("say", "applied"),
        ("end", "applied"),
        ("say", "expired"),
    ]


async def test_a_gate_with_auto_send_sends_the_system_reply_by_itself(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(904)
    await consent(p)
    code, out = await ozlab_wizard(bot.db, "gate", "system:shop-v1", "on", "--auto-send", "0.3")
    assert code == 0 and "applied" in out
    before = len(p.messages)
    update_id = await p.send_text("adventure games for Linux")
    reply = await p.wait_for_message_count(before + 1)
    assert "adventure games for Linux" in reply.text
    waited = reply.sent_at - emulator.created_times[update_id]
    assert waited >= 0.3  # held for a wizard first
    assert [(x.source, x.wizard) for x in bot.transcript_exchanges()] == [("system", None)]
    kinds = [e["kind"] for e in bot.events()]
    assert kinds[-2:] == ["reply_waiting", "auto_sent"]


async def test_a_session_gate_with_auto_send_sends_by_itself(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(906)
    await consent(p)
    async with await Desk.open(bot.db, "ada") as desk:
        session = await until(lambda: session_of(desk))
    code, _ = await ozlab_wizard(bot.db, "gate", session, "on", "--auto-send", "0.1")
    assert code == 0
    before = len(p.messages)
    await p.send_text("adventure games for Linux")
    await p.wait_for_message_count(before + 1, timeout=1.5)  # 0.1 s, and then some


async def test_a_lab_session_waits_until_the_experimenter_starts_it(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    study = shop(hmd).study.model_copy(update={"hold_after_consent": True})
    bot = await start_bot(shop(hmd).model_copy(update={"study": study}), command_interval=0.05)
    p = emulator.participant(905)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    await p.wait_for_text("experimenter will start your session")
    async with console(bot.db) as pilot:
        app = app_of(pilot)
        await shows(pilot, lambda: app.current() and app.current().state == "held")  # type: ignore[union-attr]
        await pilot.press("t")
        await p.wait_for_text("Your task")
        await shows(pilot, lambda: "start: applied" in status(pilot))
        await shows(pilot, lambda: app.current().state == "dialogue")  # type: ignore[union-attr]
    assert pick(bot.sessions(), "state") == [("dialogue",)]
