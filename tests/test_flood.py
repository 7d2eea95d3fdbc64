"""Telegram's flood limits: the pacer in simulated time, the outbox against the emulator's
429 answers (waited out and sent again, never dropped), and the emulator's flood model."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any

import pytest
from telegram import Bot

from bot.pilot.emulator import BotApiEmulator, FloodRules
from bot.pilot.emulator.flood import FloodControl
from bot.pilot.emulator.wire import ApiError
from bot.telegram.flood import TELEGRAM_LIMITS, FloodLimits, FloodPacer
from bot.telegram.outbox import TelegramOutbox
from bot.telegram.request import request_pair

TOKEN = "123456:TEST-token"


class SimulatedTime:
    """A clock and a sleep on virtual time for many tasks at once: whenever every task is
    asleep, :meth:`run` moves the clock to the earliest wake-up, so hours take no real time."""

    def __init__(self) -> None:
        self.now = 0.0
        self._asleep: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._asleep, (self.now + seconds, next(self._order), woken))
        await woken

    async def run(self, *work: Coroutine[Any, Any, None]) -> None:
        tasks = [asyncio.create_task(w) for w in work]
        while not all(t.done() for t in tasks):
            await asyncio.sleep(0)  # let every awake task run until it sleeps or ends
            awake = sum(not t.done() for t in tasks) - len(self._asleep)
            if awake == 0 and self._asleep:
                self.now = max(self.now, self._asleep[0][0])
                while self._asleep and self._asleep[0][0] <= self.now:
                    heapq.heappop(self._asleep)[2].set_result(None)
        for task in tasks:
            task.result()


class SteppedTime:
    """Simulated time for one caller at a time: each sleep moves the clock on at once."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


Sent = list[tuple[float, int]]  # (when, chat) in the order the pacer let them go


async def send(time: SimulatedTime, pacer: FloodPacer, chat: int, count: int, sent: Sent) -> None:
    """One chat's messages, one after the other as the runner sends them."""
    for _ in range(count):
        await pacer.wait(chat)
        sent.append((time.now, chat))


def times_of(sent: Sent, chat: int) -> list[float]:
    return [when for when, c in sent if c == chat]


def within_chat_limit(times: Sequence[float], limits: FloodLimits) -> bool:
    """No stretch of a chat's messages outruns the bucket: n messages need (n - burst)
    intervals of 1/rate between the first and the last."""
    interval = 1 / limits.chat_rate
    return all(
        times[j] - times[i] >= (j - i + 1 - limits.chat_burst) * interval - 1e-9
        for i in range(len(times))
        for j in range(i + 1, len(times))
    )


def most_in_one_second(times: Sequence[float]) -> int:
    """The most messages in any half-open window of one second."""
    ordered = sorted(times)
    return max(sum(1 for t in ordered if start <= t < start + 1.0 - 1e-9) for start in ordered)


# --- the pacer, in simulated time ---------------------------------------------------------


async def test_a_reply_in_three_parts_and_its_rating_go_out_at_once() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    sent: Sent = []
    await time.run(send(time, pacer, 7, 4, sent))
    assert times_of(sent, 7) == [0.0] * 4


async def test_a_wizard_burst_goes_out_at_about_one_message_a_second() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    sent: Sent = []
    await time.run(send(time, pacer, 7, 10, sent))
    times = times_of(sent, 7)
    assert times == [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert within_chat_limit(times, TELEGRAM_LIMITS)


async def test_a_chat_quiet_for_a_while_has_its_burst_again() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    sent: Sent = []

    async def two_turns() -> None:
        await send(time, pacer, 7, 6, sent)  # the burst, then two paced: the last at 2 s
        await time.sleep(4.0)  # the participant reads and types for four seconds
        await send(time, pacer, 7, 4, sent)

    await time.run(two_turns())
    times = times_of(sent, 7)
    assert times[6:] == [6.0] * 4
    assert within_chat_limit(times, TELEGRAM_LIMITS)


async def test_two_chats_do_not_wait_for_each_other() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    sent: Sent = []

    async def later(chat: int, at: float, count: int) -> None:
        await time.sleep(at)
        await send(time, pacer, chat, count, sent)

    await time.run(send(time, pacer, 1, 12, sent), later(2, 0.5, 4), later(3, 5.25, 2))
    assert times_of(sent, 2) == [0.5] * 4  # while chat 1 is being paced
    assert times_of(sent, 3) == [5.25] * 2
    assert times_of(sent, 1)[-1] == 8.0  # and chat 1 was not slowed by them
    for chat in (1, 2, 3):
        assert within_chat_limit(times_of(sent, chat), TELEGRAM_LIMITS)


async def test_the_bot_wide_limit_holds_with_many_chats() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    sent: Sent = []
    chats = range(100, 200)
    await time.run(*(send(time, pacer, chat, 3, sent) for chat in chats))
    assert len(sent) == 300
    assert most_in_one_second([when for when, _ in sent]) == TELEGRAM_LIMITS.bot_rate
    assert max(when for when, _ in sent) == 9.0  # 30 a second, no slower
    for chat in chats:
        assert within_chat_limit(times_of(sent, chat), TELEGRAM_LIMITS)


async def test_a_chat_waiting_for_the_bot_wide_limit_keeps_its_own_pace() -> None:
    time = SimulatedTime()
    limits = FloodLimits(chat_rate=1.0, chat_burst=2, bot_rate=3)
    pacer = FloodPacer(limits, clock=time.clock, sleep=time.sleep)
    sent: Sent = []
    await time.run(*(send(time, pacer, chat, 4, sent) for chat in (1, 2, 3)))
    assert most_in_one_second([when for when, _ in sent]) == 3
    for chat in (1, 2, 3):
        assert within_chat_limit(times_of(sent, chat), limits)


async def test_messages_of_one_chat_go_out_in_the_order_they_came() -> None:
    time = SimulatedTime()
    pacer = FloodPacer(clock=time.clock, sleep=time.sleep)
    order: list[int] = []

    async def message(number: int) -> None:
        await pacer.wait(7)
        order.append(number)

    await time.run(*(message(n) for n in range(8)))
    assert order == list(range(8))


def test_limits_must_be_positive() -> None:
    for wrong in ({"chat_rate": 0.0}, {"chat_burst": 0}, {"bot_rate": 0}):
        with pytest.raises(ValueError, match="positive"):
            FloodLimits(**wrong)


# --- the outbox against the emulator's 429 answers ------------------------------------------


@contextlib.asynccontextmanager
async def bot_on(emulator: BotApiEmulator) -> AsyncIterator[Bot]:
    """A PTB bot on our aiohttp request, talking to ``emulator``."""
    request, get_updates_request = request_pair()
    async with Bot(
        TOKEN, base_url=emulator.base_url, request=request, get_updates_request=get_updates_request
    ) as ptb_bot:
        yield ptb_bot


@pytest.fixture
async def flooding() -> AsyncIterator[BotApiEmulator]:
    """Telegram's flood answers with a bucket of one message, refilled 20 times a second."""
    rules = FloodRules(chat_rate=20.0, chat_burst=1, jitter=0.0)
    async with BotApiEmulator(TOKEN, flood=rules) as emulator:
        yield emulator


@pytest.fixture
async def bot(flooding: BotApiEmulator) -> AsyncIterator[Bot]:
    async with bot_on(flooding) as ptb_bot:
        yield ptb_bot


async def test_a_refused_message_waits_as_told_and_goes_again(
    flooding: BotApiEmulator, bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    p = flooding.participant(42)
    await p.send_text("/start")
    told: list[float] = []

    async def sleep(seconds: float) -> None:
        """Telegram's whole seconds stand for twentieths here: the bucket refills 20/s."""
        told.append(seconds)
        await asyncio.sleep(seconds / 20)

    outbox = TelegramOutbox(bot, sleep=sleep)
    with caplog.at_level(logging.WARNING, logger="bot.telegram.outbox"):
        for n in range(5):
            assert await outbox.send(42, f"message {n}") is not None
    assert [m.text for m in p.messages] == [f"message {n}" for n in range(5)]
    assert flooding.flood is not None and flooding.flood.refused == len(told) > 0
    assert set(told) == {1.0}
    waits = [r for r in caplog.records if "flood limit" in r.getMessage()]
    assert len(waits) == len(told)  # one line per 429


async def test_a_message_telegram_keeps_refusing_is_given_up_after_the_wait_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One message a second: every refusal says "retry after 1", and the bucket refills only
    # after a real second, far longer than the five quick tries, even on a loaded machine
    # (at 20 a second, one slow round trip let "second" through).
    rules = FloodRules(chat_rate=1.0, chat_burst=1, jitter=0.0)
    async with BotApiEmulator(TOKEN, flood=rules) as flooding, bot_on(flooding) as bot:
        p = flooding.participant(42)
        await p.send_text("/start")
        time = SteppedTime()  # the outbox waits in simulated time; the emulator's bucket does not
        outbox = TelegramOutbox(bot, flood_wait_limit=5.0, sleep=time.sleep)
        assert await outbox.send(42, "first") is not None
        with caplog.at_level(logging.WARNING, logger="bot.telegram.outbox"):
            assert await outbox.send(42, "second") is None
        assert time.slept == [1.0] * 5
        assert [m.text for m in p.messages] == ["first"]
    [given_up] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "given up" in given_up.getMessage()


async def test_only_messages_put_in_a_chat_wait_for_the_pacer() -> None:
    async with BotApiEmulator(TOKEN) as emulator, bot_on(emulator) as bot:
        await only_messages_wait(emulator, bot)


async def only_messages_wait(emulator: BotApiEmulator, bot: Bot) -> None:
    p = emulator.participant(42)
    await p.send_text("/start")
    time = SteppedTime()  # the pacer's time; the emulator keeps no flood limits here
    pacer = FloodPacer(
        FloodLimits(chat_rate=20.0, chat_burst=1), clock=time.clock, sleep=time.sleep
    )
    outbox = TelegramOutbox(bot, pacer=pacer, sleep=time.sleep)
    message_id = await outbox.send(42, "question", buttons=((("Yes", "y"),),))
    assert message_id is not None and time.slept == []
    await outbox.typing(42)
    await p.tap(text="Yes")
    assert p.last_query_id is not None
    await outbox.toast(p.last_query_id, "noted")
    assert time.slept == []  # chat actions and answers to taps are not messages
    await outbox.edit(42, message_id, "question (answered)")
    await outbox.remove_buttons(42, message_id)
    assert time.slept == [0.05, 0.05]  # each edit waited for its slot


# --- the emulator's flood model ---------------------------------------------------------------


def refused_after(control: FloodControl, chat: Any, at: float) -> int | None:
    """The retry_after of a 429 for a message at ``at``, or None when it is admitted."""
    try:
        control.admit(chat, at)
    except ApiError as error:
        assert error.code == 429 and error.description.startswith("Too Many Requests")
        return error.retry_after
    return None


def test_the_emulator_allows_a_chat_its_burst_then_one_a_second() -> None:
    control = FloodControl(FloodRules(jitter=0.0))
    assert [refused_after(control, 7, 0.0) for _ in range(4)] == [None] * 4
    assert refused_after(control, 7, 0.0) == 1
    assert refused_after(control, 7, 0.5) == 1  # half a second still to wait: told 1 s
    assert refused_after(control, 7, 1.0) is None
    assert refused_after(control, 8, 1.0) is None  # another chat has its own bucket
    assert control.refused == 2


def test_the_emulator_allows_the_bot_thirty_messages_a_second() -> None:
    control = FloodControl(FloodRules(jitter=0.0))
    assert all(refused_after(control, chat, 0.0) is None for chat in range(30))
    assert refused_after(control, 30, 0.5) == 1
    assert refused_after(control, 30, 1.0) is None
