"""Voice both ways, every part real: espeak-ng speaks known sentences, they go as voice notes
through the emulator to a bot started as ``ozlab run`` starts it (the engines built from
the study file's ``speech``, none given), PocketSphinx transcribes them offline, the system
gets the words, and its replies come back spoken by espeak-ng as OGG/Opus voice notes.

The word error rate: PocketSphinx on espeak-ng's ``en-us`` voice at 140 words a minute
measured 0.53 over the 18 sentences of ``tests/test_speech_sphinx.py`` (0.42 over the six
used here, the same in every run); the test allows :data:`MOST_WORD_ERRORS`, 0.75, for the
margin another espeak-ng or FFmpeg may need. The same transcripts scored against the
sentences shifted by one score above 0.9: the bound tells hearing from noise.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.core.errors import SystemSetupError
from bot.core.word_error_rate import NO_ERRORS, word_errors
from bot.pilot.emulator import BotApiEmulator
from bot.runtime.app import BotConfig, run_bot
from bot.speech import audio
from bot.speech.espeak import Espeak
from bot.speech.sphinx import PocketSphinx
from bot.store import open_store
from scenarios.media import Speech, TaskMedia
from scenarios.models import StudyBundle
from tests.conftest import SECRET, TOKEN, StartBot, consent

pytestmark = pytest.mark.slow

SAID = (
    "please book a table for two people tonight",
    "what time does the museum open on sunday",
    "i want to go home",
    "how much does it cost",
    "i need a taxi to the airport",
    "good morning how are you",
)
MOST_WORD_ERRORS = 0.75


class Echo:
    """A text system that says back the words it got, and keeps them."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def respond(self, conversation: Conversation) -> SystemReply:
        self.heard.append(conversation.message)
        return SystemReply((f"you said {conversation.message}",))

    async def close(self) -> None:
        pass


def spoken_study(hmd: StudyBundle) -> StudyBundle:
    """The HMD study with voice notes in and spoken replies out, on this machine's engines."""
    speech = Speech.model_validate(
        {"speech_to_text": {"engine": "pocketsphinx"}, "text_to_speech": {"engine": "espeak-ng"}}
    )
    media = TaskMedia(participant_sends=("voice",), system_returns=("voice",))
    scenarios = {sid: s.model_copy(update={"media": media}) for sid, s in hmd.scenarios.items()}
    study = hmd.study.model_copy(update={"speech": speech})
    return hmd.model_copy(update={"study": study, "scenarios": scenarios})


async def test_spoken_sentences_reach_the_system_as_words_and_its_replies_come_back_spoken(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    echo = Echo()
    bot = await start_bot(spoken_study(hmd), systems={s.id: echo for s in hmd.study.systems})
    voice = Espeak(voice="en-us", words_per_minute=140)
    p = emulator.participant(901)
    await consent(p)
    for number, sentence in enumerate(SAID, start=1):
        note = await voice.speak(sentence)
        await p.send_voice(note.audio, duration=round(note.audio_seconds))
        await p.wait_for(
            lambda q, n=number: sum(m.media is not None for m in q.messages) >= n, timeout=60
        )
    await bot.stop()

    assert len(echo.heard) == len(SAID)
    rate = sum(map(word_errors, SAID, echo.heard), NO_ERRORS).rate
    assert rate <= MOST_WORD_ERRORS, (rate, echo.heard)
    shifted = SAID[1:] + SAID[:1]
    assert sum(map(word_errors, shifted, echo.heard), NO_ERRORS).rate > 0.9

    replies = [m for m in p.messages if m.media is not None]
    assert [m.media.kind for m in replies if m.media] == ["voice"] * len(SAID)
    for reply in replies:
        assert reply.media is not None and reply.media.content_type == "audio/ogg"
        assert audio.is_voice_note(reply.media.data) and audio.duration(reply.media.data) > 0.5
    # the voice note says the reply: heard again, it is closer to its own reply than to another
    sphinx = PocketSphinx()
    try:
        first = replies[0].media
        assert first is not None
        again = (await sphinx.transcribe(first.data)).text
    finally:
        await sphinx.close()
    own = word_errors(f"you said {echo.heard[0]}", again).rate
    other = word_errors(f"you said {echo.heard[2]}", again).rate
    assert own <= MOST_WORD_ERRORS and own < other, (own, other, again)

    [*recorded] = bot.tables()["media"]
    assert [(m["kind"], m["engine"], m["model"]) for m in recorded] == [
        ("voice", "pocketsphinx", "en-us")
    ] * len(SAID)
    assert [m["transcript"] for m in recorded] == echo.heard


async def test_an_engine_that_cannot_be_built_stops_the_start_and_closes_what_it_was_given(
    hmd: StudyBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "study.sqlite"
    store = await open_store(db, time.time, study=hmd.study.id)
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng on it
    config = BotConfig(db=db, token=TOKEN, secret=SECRET, bot_api_url="http://127.0.0.1:9")
    with pytest.raises(SystemSetupError, match="espeak-ng is not installed"):
        await run_bot(spoken_study(hmd), config, stop=asyncio.Event(), store=store)
    with pytest.raises(ValueError, match="closed"):
        await store.highest_update_id()
