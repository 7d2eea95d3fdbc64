"""Many participants writing at once: each one's messages are stored and answered in the order
they were sent, while the chats themselves run concurrently.

PTB's own concurrent update processing reorders a chat's messages under load; the bot's
``ChatOrderedProcessor`` must not. The echo system sleeps a random sliver inside each call to
shuffle the timing between chats (that sleep is the load, not a way of waiting).
"""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.pilot.emulator import BotApiEmulator, Participant
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent
from tests.store_reads import pick

pytestmark = pytest.mark.slow

PARTICIPANTS = 40
MESSAGES = 15


class Echo:
    """Answers with the message and how many turns it was shown before it."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)
        self.in_flight = 0
        self.most_in_flight = 0

    async def respond(self, conversation: Conversation) -> SystemReply:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self._random.random() * 0.002)
        finally:
            self.in_flight -= 1
        return SystemReply((f"echo {conversation.message} after {len(conversation.history)}",))

    async def close(self) -> None:
        pass


def roomy(bundle: StudyBundle) -> StudyBundle:
    """The HMD study with room for every message of the burst in one session."""
    scenarios = {
        sid: scenario.model_copy(update={"max_exchanges": 100})
        for sid, scenario in bundle.scenarios.items()
    }
    return bundle.model_copy(update={"scenarios": scenarios})


def sent_by(p: Participant) -> list[str]:
    return [f"{p.user_id}:{n:02d}" for n in range(MESSAGES)]


async def test_bursts_from_many_chats_keep_each_chats_order(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    echo = Echo(seed=7)
    bot = await start_bot(roomy(hmd), systems={s.id: echo for s in hmd.study.systems})
    people = [emulator.participant(70_000 + i) for i in range(PARTICIPANTS)]
    await asyncio.gather(*(consent(p) for p in people))
    starts = {p.user_id: len(p.messages) for p in people}

    began = time.perf_counter()
    for n in range(MESSAGES):  # interleaved, nobody waits for a reply
        for p in people:
            await p.send_text(sent_by(p)[n])
    await asyncio.gather(
        *(p.wait_for_message_count(starts[p.user_id] + MESSAGES, timeout=30) for p in people)
    )
    elapsed = time.perf_counter() - began

    assert echo.most_in_flight > 1  # the chats really were handled concurrently
    stored = bot.tables()
    sessions = dict(pick(stored["sessions"], "participant_id", "session_id"))
    assert len(sessions) == PARTICIPANTS
    for p in people:
        expected = [f"echo {text} after {n}" for n, text in enumerate(sent_by(p))]
        got = [m.text for m in p.messages[starts[p.user_id] :]]
        assert got == expected, p.user_id  # replies arrived in order, each after its history
    rows = pick(stored["exchanges"], "session_id", "turn", "user_text", "system_text")
    by_session: dict[str, list[tuple[int, str, str]]] = {}
    for session_id, turn, user_text, system_text in rows:
        by_session.setdefault(session_id, []).append((turn, user_text, system_text))
    owner = {p.user_id: p for p in people}
    assert len(by_session) == PARTICIPANTS
    for turns in by_session.values():
        user_id = int(turns[0][1].split(":")[0])
        texts = sent_by(owner[user_id])
        assert turns == [
            (n + 1, text, f"echo {text} after {n}") for n, text in enumerate(texts)
        ]  # stored in the order sent: turn n is the n-th message
    assert elapsed < 20, f"{PARTICIPANTS * MESSAGES} messages took {elapsed:.1f} s"
