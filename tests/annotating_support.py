"""Annotators acting in Telegram through the emulator: they read the bot's messages and tap
the buttons of the item in front of them, as a person would."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.annotation.invitations import invite_annotators
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from bot.pilot.simulation.play import StudyPlayer
from bot.store.interface import StudyStore
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle
from tests.command_line import ozlab_here

T = TypeVar("T")

ALL_DONE = "You have rated everything assigned to you"
Choose = Callable[[BotMessage], str | None]
"""Which button of an item to tap (its label), or None to type ``typed`` instead."""


def data_of(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def asks(message: BotMessage) -> bool:
    """An annotation item with buttons (an answer, a skip, its examples)."""
    return not message.deleted and any(d[:1] == "n" and d[2:3] == ":" for d in data_of(message))


def current_item(p: Participant) -> BotMessage | None:
    return next((m for m in reversed(p.messages) if asks(m)), None)


async def invite(
    db: Path, job: str, count: int, clock: Callable[[], float] = time.time
) -> list[tuple[str, str]]:
    """``count`` annotators of ``job`` (pseudonym, code), the work assigned (on the bot's
    clock, when the test gives it one)."""
    store = await open_store(db, clock)
    try:
        invited = await invite_annotators(store, None, job, count, clock)
    finally:
        await store.close()
    return list(invited.annotators)


async def rate_all(
    p: Participant,
    choose: Choose,
    *,
    typed: str = "Smooth, and they laughed twice.",
    until: str = ALL_DONE,
) -> int:
    """Answer every item until the bot says all is rated (``until`` in its last message);
    how many answers were given."""
    given = 0
    while True:
        await p.wait_for(lambda q: current_item(q) is not None or _done(q, until), timeout=15)
        message = current_item(p)
        if message is None:
            return given
        before, count = tuple(data_of(message)), len(p.messages)
        label = choose(message)
        if label is None:
            await p.send_text(typed)
        else:
            await p.tap(text=label, message_id=message.message_id)
        given += 1

        def moved(
            q: Participant, m: BotMessage = message, was: tuple[str, ...] = before, n: int = count
        ) -> bool:
            return tuple(data_of(m)) != was or len(q.messages) > n

        await p.wait_for(moved, timeout=15)


def _done(p: Participant, until: str = ALL_DONE) -> bool:
    last = p.messages[-1] if p.messages else None
    return last is not None and until in last.text


def first_point(message: BotMessage) -> str:
    """The first answer button ("1 · ..." or "Yes")."""
    return next(text for row in message.keyboard for text, d in row if d and d[1:2] == "a")


def point(value: int) -> Choose:
    """A scale point when the item is a scale, else the first option (Skip a text)."""

    def choose(message: BotMessage) -> str | None:
        answers = [t for row in message.keyboard for t, d in row if d and d[1:2] == "a"]
        if not answers:
            return None  # a text item: type
        wanted = (t for t in answers if t == str(value) or t.startswith(f"{value} ·"))
        return next(wanted, answers[0])

    return choose


async def stored(db: Path, query: Callable[[StudyStore], Awaitable[T]]) -> T:
    """What the store holds now (a connection of its own, beside the running bot)."""
    store = await open_store(db)
    try:
        return await query(store)
    finally:
        await store.close()


async def play(
    emulator: BotApiEmulator, bundle: StudyBundle, *, participants: int, first: int = 0
) -> None:
    """Simulated participants play the study through to its end (``ozlab demo``'s players):
    the conversations the annotators then rate (``first``: the first one's number, to
    bring more of them later)."""
    players = [
        StudyPlayer(
            emulator.participant(5000 + i, first_name=f"Sim{i}"), bundle, random.Random(i)
        ).play()
        for i in range(first, first + participants)
    ]
    played = await asyncio.gather(*players)
    assert all(p.finished for p in played)


def by_exchange(shift: int) -> Choose:
    """A scale point that follows the exchange's number (annotators who see the same
    thing rate alike; ``shift`` makes one of them differ), the first option elsewhere."""

    def choose(message: BotMessage) -> str | None:
        found = re.search(r"Exchange (\d+) of", message.text)
        number = int(found.group(1)) if found else 3
        return point((number + shift) % 5 + 1)(message)

    return choose


async def json_report(db: Path, out: Path) -> dict[str, Any]:
    """``ozlab report --format json --out``, run in this process on a thread of its own (a
    test of the report's numbers, not of a process: a new interpreter would import pandas
    and SciPy again)."""
    done = await asyncio.to_thread(
        ozlab_here, "report", "--db", db, "--format", "json", "--out", out
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(await asyncio.to_thread(out.read_text, "utf-8"))
    return loaded
