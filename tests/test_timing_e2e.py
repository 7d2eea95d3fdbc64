"""The clock through the real bot: reminders, abandonment, time limits, invitation codes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle, Timing
from tests.conftest import StartBot, consent, say
from tests.store_reads import pick

pytestmark = pytest.mark.slow


async def wait_until(check: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait for a condition nothing can wake us for: a row committed by the bot (the store
    does not notify its readers), so it is polled, with a deadline."""
    async with asyncio.timeout(seconds):
        while not check():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


def with_timing(bundle: StudyBundle, **timing: object) -> StudyBundle:
    study = bundle.study.model_copy(update={"timing": Timing(**timing)})
    return bundle.model_copy(update={"study": study})


async def test_silence_reminds_once_then_abandons_and_the_participant_resumes(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(with_timing(hmd, reminder_after=0.3, abandon_after=1.0))
    p = emulator.participant(601)
    await consent(p)
    await say(p, "adventure games for linux")
    await p.wait_for_text("Are you still there?")
    await wait_until(lambda: pick(bot.sessions(), "state") == [("abandoned",)])
    assert sum("still there" in m.text for m in p.messages) == 1
    reply = await say(p, "sorry, I am back: what about the first one?")
    assert "still there" not in reply
    stored = bot.tables()
    assert pick(stored["sessions"], "state") == [("dialogue",)]
    kinds = [e["kind"] for e in stored["events"]]
    assert kinds == ["reminded", "abandoned", "resumed"]
    assert len([x for x in stored["exchanges"] if x["system_text"] is not None]) == 2


async def test_a_study_can_close_abandoned_sessions(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bundle = with_timing(hmd, reminder_after=0.2, abandon_after=0.5, close_abandoned=True)
    bot = await start_bot(bundle)
    p = emulator.participant(602)
    await consent(p)
    await p.wait_for_text("closed after a long silence")
    assert pick(bot.sessions(), "state", "end_reason") == [("abandoned", "abandoned")]
    await p.send_text("hello?")
    await p.wait_for_text("closed after a long silence")


async def test_the_time_limit_ends_the_task(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    scenario = hmd.scenarios["hmd-gift"].model_copy(update={"time_limit": 0.4})
    bot = await start_bot(hmd.model_copy(update={"scenarios": {"hmd-gift": scenario}}))
    p = emulator.participant(603)
    await consent(p)
    await p.wait_for_text("This task is over")
    await p.wait_for_text("1/5")
    assert pick(bot.sessions(), "end_reason", "success") == [("time_limit", 0)]


async def test_invitation_codes(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    study = hmd.study.model_copy(update={"invite_codes": ("lab-7",)})
    bot = await start_bot(hmd.model_copy(update={"study": study}))
    p = emulator.participant(604)
    await p.send_text("/start")
    await p.wait_for_text("needs an invitation code")
    await p.send_text("/start nope")
    await p.wait_for_text("not valid")
    assert bot.participants() == []
    await p.send_text("/start lab-7")
    await p.wait_for_text("Privacy agreement")
