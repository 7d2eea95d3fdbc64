"""The real bot against an emulator that answers floods as Telegram does (429, retry after N):
a reply in three parts with the rating that follows it, then a burst of wizard messages.
Paced, none of them earns a 429; unpaced, Telegram's refusals delay them and lose none."""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib.resources import files

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator, FloodRules, Participant
from bot.telegram.flood import TELEGRAM_LIMITS, FloodLimits
from bot.telegram.outbox import split_text
from scenarios.loading import load_questionnaire
from scenarios.models import StudyBundle
from tests.conftest import TOKEN, StartBot, consent
from tests.e2e_support import only_system
from tests.test_wizard_desk import session_of, until

pytestmark = pytest.mark.slow

LONG = " ".join(f"word{n}" for n in range(2000))[:10_000].rstrip()
"""What the system answers: 10,000 characters, three messages on Telegram."""
WIZARD_BURST = [f"From the wizard, {n + 1} of 6" for n in range(6)]


class LongWinded:
    """A system under test whose every answer is :data:`LONG`."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply((LONG,))

    async def close(self) -> None:
        """Nothing to release."""


@pytest.fixture
async def emulator() -> AsyncIterator[BotApiEmulator]:
    """Overrides conftest's: Telegram's flood limits answered with 429."""
    async with BotApiEmulator(TOKEN, flood=FloodRules()) as emu:
        yield emu


def rated(hmd: StudyBundle) -> StudyBundle:
    """The HMD study with one system and a rating question after each of its replies."""
    bundle = only_system(hmd, "shop-v1")
    scenario = bundle.scenarios["hmd-gift"].model_copy(update={"exchange": ("xrec-exchange",)})
    rating = load_questionnaire(files("questionnaires") / "library" / "xrec-exchange.yaml")
    questionnaires = {**bundle.questionnaires, "xrec-exchange": rating}
    return bundle.model_copy(
        update={"scenarios": {"hmd-gift": scenario}, "questionnaires": questionnaires}
    )


async def long_reply_then_wizard_burst(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, pacing: FloodLimits | None
) -> Participant:
    """Everything the participant is shown, checked in order; the participant returned."""
    bot = await start_bot(
        rated(hmd), systems={"shop-v1": LongWinded()}, pacing=pacing, command_interval=0.05
    )
    p = emulator.participant(9301)
    await consent(p)
    before = len(p.messages)
    await p.send_text("Hello, shop")
    await p.wait_for_message_count(before + 4, timeout=30)
    *parts, rating = p.messages[before : before + 4]
    assert [m.text for m in parts] == split_text(LONG) and len(parts) == 3
    assert rating.buttons  # the question about the reply, with its answers
    async with await Desk.open(bot.db, "ada") as desk:
        session = await until(lambda: session_of(desk))
        for text in WIZARD_BURST:
            await desk.command("say", session, text=text)
        await p.wait_for_message_count(before + 4 + len(WIZARD_BURST), timeout=30)
    assert [m.text for m in p.messages[before + 4 :]] == WIZARD_BURST
    return p


async def test_paced_messages_earn_no_429(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    await long_reply_then_wizard_burst(emulator, start_bot, hmd, TELEGRAM_LIMITS)
    assert emulator.flood is not None and emulator.flood.refused == 0
    assert not [c for c in emulator.calls if c.status == 429]


async def test_unpaced_messages_refused_by_telegram_are_delayed_never_lost(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    p = await long_reply_then_wizard_burst(emulator, start_bot, hmd, None)
    assert emulator.flood is not None and emulator.flood.refused > 0  # Telegram said wait
    texts = [m.text for m in p.messages]
    assert all(texts.count(text) == 1 for text in WIZARD_BURST)  # each once, none lost
