"""Stress tests of a spoken study: a participant's voice note, transcribed by the bot on
the local Bot API emulator, is the logged utterance that ``ozlab stress`` perturbs, and
its transcript (unchanged, and perturbed) is what a replay sends the system."""

from __future__ import annotations

from bot.core.conversation import Conversation, SystemReply
from bot.pilot.emulator import BotApiEmulator
from bot.store.sqlite import open_store
from bot.store.stress_records import Review
from bot.stress.generate import GENERATED_TYPES, generate
from bot.stress.replay.runner import run_stress_tests
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent
from tests.fake_servers import serving
from tests.test_media_e2e import OGG, VOICE, Echo, ServerTranscriber, SpeechServer, spoken

SAID = "I want an adventure game about trains for my sister"


class Listener:
    """A system that keeps every message it is sent, and answers each the same way."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def respond(self, conversation: Conversation) -> SystemReply:
        self.heard.append(conversation.message)
        return SystemReply(("Here are three games.",))

    async def close(self) -> None:
        pass


async def test_a_voice_notes_transcript_is_the_utterance_a_stress_test_replays(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    heard = SpeechServer()
    async with serving(heard.app) as heard.url:
        bot = await start_bot(
            spoken(hmd, VOICE),
            systems={s.id: Echo() for s in hmd.study.systems},
            transcriber=ServerTranscriber(heard.url),
        )
        p = emulator.participant(971)
        await consent(p)
        await p.send_voice(OGG + SAID.encode(), duration=4)
        await p.wait_for_text(f"you said: {SAID}")
        await bot.stop()
    store = await open_store(bot.db)
    try:
        utterances = await store.stress_utterances()
        assert [u.text for u in utterances] == [SAID]  # the words heard, as the user's turn
        made = generate(utterances, sorted(GENERATED_TYPES), "en", seed=3, per_type=1)
        assert made and {p.original for p in made} == {SAID}
        await store.add_stress_tests(made, Review.ACCEPTED)
        listeners = {s.id: Listener() for s in hmd.study.systems}
        summary = await run_stress_tests(
            store, listeners, {sid: {} for sid in hmd.scenarios}, only_systems=()
        )
    finally:
        await store.close()
    assert summary.replayed == len(made)  # each against the system the session met
    sent = sorted(message for listener in listeners.values() for message in listener.heard)
    # the unchanged replay sends the transcript, the perturbed one the transcript perturbed
    assert sent == sorted([SAID] * len(made) + [p.perturbed for p in made])
