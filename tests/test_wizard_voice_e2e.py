"""A wizard answers a participant's voice note by text or by a voice note of their own
typed words (spoken by the study's text-to-speech): through ``ozlab wizard`` as a script
runs it and from the console's key, the bot on the local Bot API emulator applying each
command."""

from __future__ import annotations

import json

import pytest

from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.participant import Participant
from scenarios.media import TaskMedia
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent, say
from tests.fake_servers import serving
from tests.test_media_e2e import (
    OGG,
    ServerSpeaker,
    ServerTranscriber,
    SpeechServer,
    VoiceServer,
    spoken,
)
from tests.test_wizard_app import app_of, commands, console, shows, status
from tests.test_wizard_cli import ozlab_wizard, parse
from tests.test_wizard_desk import session_of, shop, until, woz


async def voice_note(p: Participant, words: str) -> None:
    """Wait for a voice note that speaks ``words`` (the speech server's audio is its
    words after an Ogg header)."""
    audio = OGG + words.encode()

    def spoken_to(chat: Participant) -> bool:
        return any(m.media is not None and m.media.data == audio for m in chat.messages)

    await p.wait_for(spoken_to)
    [note] = [m for m in p.messages if m.media is not None and m.media.data == audio]
    assert note.media is not None and note.media.kind == "voice"


def test_voice_or_text_is_an_option_of_say_and_reply() -> None:
    assert parse("say", "s-1", "hi", "--voice").answer_as == "voice"
    assert parse("reply", "s-1", "--replace", "hi", "--text").answer_as == "text"
    assert parse("reply", "s-1", "--approve").answer_as is None


async def test_a_wizard_answers_a_voice_note_by_voice_or_by_text(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    heard = SpeechServer()
    async with serving(heard.app) as heard.url, serving(VoiceServer().app) as voice:
        bot = await start_bot(
            woz(spoken(hmd, TaskMedia(participant_sends=("voice",)))),
            transcriber=ServerTranscriber(heard.url),
            speaker=ServerSpeaker(voice),
            command_interval=0.05,
        )
        p = emulator.participant(961)
        await consent(p)
        await p.send_voice(OGG + b"a game about trains", duration=3)
        async with await Desk.open(bot.db, "ada") as desk:
            session = await until(lambda: session_of(desk))
            await until(desk.waiting_replies)
        code, out = await ozlab_wizard(
            bot.db, "reply", session, "--replace", "Try Railway Empire", "--voice"
        )
        assert code == 0 and out.endswith("applied\n"), out
        await voice_note(p, "Try Railway Empire")  # the wizard's typed words, spoken

        await p.send_voice(OGG + b"something cheaper", duration=2)
        async with await Desk.open(bot.db, "ada") as desk:
            await until(desk.waiting_replies)
        code, out = await ozlab_wizard(bot.db, "reply", session, "--replace", "Mini Metro")
        assert code == 0, out
        typed = await p.wait_for_text("Mini Metro")  # as the task sends replies: text
        assert typed.media is None
        code, out = await ozlab_wizard(bot.db, "say", session, "Anything else?", "--voice")
        assert code == 0, out
        await voice_note(p, "Anything else?")
        await bot.stop()
    stored = bot.tables()
    sources = [(x["turn"], x["system_text"], x["source"]) for x in stored["exchanges"]]
    assert sources == [(1, "Try Railway Empire", "wizard"), (2, "Mini Metro", "wizard")]
    events = [(e["kind"], json.loads(e["data"])) for e in stored["events"]]
    voiced = [data for kind, data in events if kind == "reply_spoken"]
    assert [(v["turn"], v["engine"], v["failed"]) for v in voiced] == [
        (1, "openai", False),
        (2, "openai", False),
    ]
    [message] = [data for kind, data in events if kind == "wizard_message"]
    assert message == {"wizard": "ada", "text": "Anything else?", "as": "voice"}


@pytest.mark.slow  # the Textual console, as tests/test_wizard_app.py
async def test_the_console_key_chooses_voice_notes_or_text(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    async with serving(VoiceServer().app) as voice:
        bot = await start_bot(shop(hmd), speaker=ServerSpeaker(voice), command_interval=0.05)
        p = emulator.participant(962)
        await consent(p)
        await say(p, "adventure games for Linux")
        async with console(bot.db, "grace") as pilot:
            app = app_of(pilot)
            session = await shows(pilot, lambda: app.selected)
            await pilot.press("b")  # as the task sends replies → as a voice note
            assert "what you write goes as a voice note" in status(pilot)
            await pilot.press("w", *"Hello", "enter")
            await voice_note(p, "Hello")
            await shows(pilot, lambda: "say as a voice note: applied" in status(pilot))
            await pilot.press("b", "w", *"Typed", "enter")  # → as text
            assert (await p.wait_for_text("Typed")).media is None
            await shows(pilot, lambda: "say as text: applied" in status(pilot))
            await pilot.press("b")  # → as the task sends replies, and round again
            assert "as the task sends replies" in status(pilot)
        await bot.stop()
    assert commands(bot.db) == [
        ("say", session, {"text": "Hello", "as": "voice"}, "grace"),
        ("say", session, {"text": "Typed", "as": "text"}, "grace"),
    ]
