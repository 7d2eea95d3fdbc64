"""The heartbeat: one grep-able line that says the bot is alive and what it holds, counts
only; on a real store with a hand-moved clock, then in the running bot."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.participants import HeldReply, ParticipantStatus
from bot.core.vocabulary import Stage
from bot.engine import events as ev
from bot.engine.delivery import Delivery
from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.waiting import Waiters
from bot.runtime.heartbeat import Heartbeat, ago
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from tests.conftest import StartBot, consent


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def standing(study: str, participant: str, status: ParticipantStatus) -> StepCommit:
    return StepCommit(study, participant, "{}", status, "key")


def at(
    stage: Stage, *, held: HeldReply | None = None, abandoned: bool = False
) -> ParticipantStatus:
    return ParticipantStatus(stage, 1.0, held=held, abandoned=abandoned)


async def test_the_line_counts_who_is_in_the_study_and_when_telegram_last_spoke(
    tmp_path: Path,
) -> None:
    clock = Clock(1000.0)
    store = await open_store(tmp_path / "study.sqlite", clock)
    try:
        for commit in (
            standing("hmd", "a", at(Stage.DIALOGUE)),
            standing("hmd", "b", at(Stage.DIALOGUE, held=HeldReply(("Try this",), 5.0))),
            standing("hmd", "c", at(Stage.QUESTIONNAIRE, abandoned=True)),
            standing("hmd", "d", at(Stage.FINISHED)),
            standing("hmd", "e", at(Stage.DECLINED)),
            standing("another", "f", at(Stage.DIALOGUE)),  # the same file, another study
        ):
            await store.commit_step(commit)
        heartbeat = Heartbeat("hmd", store, clock)
        clock.now += 185
        assert await heartbeat.line() == (
            "ozlab alive: study hmd · 5 participants · 2 active · 1 waiting"
            " · no update since the start 3 min ago"
        )
        handed: list[Delivery] = []
        deliver = heartbeat.counting(handed.append)
        update = Delivery(7, ev.TextReceived("hello"), update_id=1)
        deliver(update)
        assert handed == [update]
        clock.now += 41
        assert await heartbeat.line() == (
            "ozlab alive: study hmd · 5 participants · 2 active · 1 waiting · last update 41 s ago"
        )
    finally:
        await store.close()


def test_ages_read_at_a_glance() -> None:
    assert [ago(s) for s in (-1, 0, 41.9, 119, 120, 7199, 7200, 172_799, 172_800)] == [
        "0 s", "0 s", "41 s", "119 s", "2 min", "119 min", "2 h", "47 h", "2 d",
    ]  # fmt: skip


class LogLines(logging.Handler):
    """The lines one logger writes, for a test to wait on (woken by each, never polling)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self._waiters = Waiters()
        self._loop = asyncio.get_running_loop()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self._loop.call_soon_threadsafe(self._waiters.wake)

    async def wait_for(self, start: str, seconds: float = 10.0) -> str:
        await self._waiters.until(
            lambda: any(line.startswith(start) for line in self.lines),
            seconds,
            lambda: f"no line starting {start!r} within {seconds:g} s: {self.lines[-5:]}",
        )
        return next(line for line in self.lines if line.startswith(start))


@pytest.fixture
async def heartbeats() -> AsyncIterator[LogLines]:
    logger = logging.getLogger("bot.runtime.heartbeat")
    handler, level = LogLines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


async def test_the_running_bot_logs_the_heartbeat(
    emulator: BotApiEmulator, start_bot: StartBot, heartbeats: LogLines
) -> None:
    await start_bot(heartbeat_interval=0.05)
    first = await heartbeats.wait_for("ozlab alive: study hmd · 0 participants")
    assert first.endswith(" · 0 active · 0 waiting · no update since the start 0 s ago")
    await consent(emulator.participant(5151, first_name="Ada", username="ada_l"))
    line = await heartbeats.wait_for("ozlab alive: study hmd · 1 participant · 1 active")
    assert line.startswith("ozlab alive: study hmd · 1 participant · 1 active · 0 waiting · last")
    assert not [text for text in heartbeats.lines if "5151" in text or "Ada" in text]
