"""Annotators and the clock, through the emulator: when an annotator stays silent past the
job's deadline while everyone else waits, the bot's clock (a fake one here, never a sleep)
gives their open targets to someone else and writes to whoever was waiting; the silent one,
back later, is told and gets their next target."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store.interface import StudyStore
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotating_support import current_item, invite, play, point, rate_all, stored
from tests.conftest import StartBot

pytestmark = pytest.mark.slow

DROP_OUT_AFTER = 600.0
WAITING = ("Nothing to rate yet", "Exchange 1 of")
MOVED = "given to another annotator while you were away"


class FakeClock:
    """The bot's clock (its store's too), moved on by the test."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _with_drop_out(bundle: StudyBundle, job_id: str, seconds: float) -> StudyBundle:
    job = bundle.jobs[job_id].model_copy(update={"drop_out_after": seconds})
    return bundle.model_copy(update={"jobs": {**bundle.jobs, job_id: job}})


def _waiting(p: Participant) -> bool:
    return any(t in m.text for m in p.messages for t in WAITING)


def _another_item(p: Participant, message_id: int) -> bool:
    shown = current_item(p)
    return shown is not None and shown.message_id != message_id


async def _assigned(db: Path, job: str) -> dict[str, set[str]]:
    """Per annotator: the targets assigned to them now (not released)."""

    async def read(store: StudyStore) -> dict[str, set[str]]:
        state = await store.annotation_state(job)
        assert state is not None
        mine: dict[str, set[str]] = {}
        for a in state.assignments:
            mine.setdefault(a.annotator, set()).add(a.target)
        return mine

    return await stored(db, read)


async def test_a_silent_annotators_targets_go_on_the_clock_to_one_who_waits_and_they_hear_it(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    clock = FakeClock()
    bundle = _with_drop_out(load_study("xrec"), "xrec", DROP_OUT_AFTER)
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db, clock=clock)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 3, clock))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(7600 + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(_waiting, timeout=15)
    before = await _assigned(db, "xrec")
    silent, staying = sorted(before)
    [third] = set(codes) - {silent, staying}
    theirs = before[silent]

    await rate_all(people[staying], point(1))  # done and waiting: nobody finishes anything now
    clock.advance(DROP_OUT_AFTER / 2)
    assert not any("There is more to rate" in m.text for m in people[third].messages)
    clock.advance(DROP_OUT_AFTER / 2 + 1)  # the silent one's deadline has passed
    await people[third].wait_for_text("There is more to rate", timeout=15)
    after = await _assigned(db, "xrec")
    assert after[third] == theirs and silent not in after

    # Another conversation, and one more annotator: the silent one gets part of the new work.
    await play(emulator, bundle, participants=1, first=1)
    await invite(db, "xrec", 1, clock)
    later = await _assigned(db, "xrec")
    assert later.get(silent) and not later[silent] & theirs

    # Back, they tap the item still in front of them: told, and shown their next target.
    back = people[silent]
    item = current_item(back)
    assert item is not None
    await back.tap(text="Yes", message_id=item.message_id)
    await back.wait_for_text(MOVED, timeout=15)
    await back.wait_for(lambda q: _another_item(q, item.message_id), timeout=15)
    await rate_all(back, point(1))
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert {r.target for r in ratings if r.annotator == silent} == later[silent]


class CountingClock(FakeClock):
    """A fake clock that counts how often it was read at the present time: the bot reads it
    at every tick, so many reads after a move mean the bot's clock looked at the jobs.
    :meth:`looked` waits for them (woken by the reads, the store's thread's too).

    The tick reads it about once per tick (every 0.05 s here): 25 reads are over a second
    of ticks after the move, and the planning a look starts takes milliseconds."""

    LOOKS = 25

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self._move = 0
        self._loop = asyncio.get_running_loop()
        self._looked = asyncio.Event()

    def __call__(self) -> float:
        self.reads += 1
        if self.reads == self.LOOKS:
            self._loop.call_soon_threadsafe(self._mark, self._move)
        return self.now

    def _mark(self, move: int) -> None:
        if move == self._move:  # not a count of the time before the last move
            self._looked.set()

    def advance(self, seconds: float) -> None:
        super().advance(seconds)
        self.reads, self._move = 0, self._move + 1
        self._looked.clear()

    async def looked(self) -> None:
        """Return once the bot read the clock :attr:`LOOKS` times since the last move."""
        await self._looked.wait()


async def _version(db: Path, job: str) -> int:
    async def read(store: StudyStore) -> int:
        state = await store.annotation_state(job)
        assert state is not None
        return state.version

    return await stored(db, read)


async def test_a_release_nobody_can_take_is_not_made_on_the_clock_and_nobody_hears_of_it(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """Two annotators, two per target: the silent one's targets have nowhere to go, so the
    clock changes nothing, deadline after deadline, and writes to nobody."""
    clock = CountingClock()
    bundle = _with_drop_out(load_study("xrec"), "xrec", DROP_OUT_AFTER)
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db, clock=clock)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 2, clock))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(7700 + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(_waiting, timeout=15)
    silent, staying = sorted(codes)
    await rate_all(people[staying], point(1))
    before = await _assigned(db, "xrec")
    assert before[silent]  # their open targets, nobody else to take them
    version = await _version(db, "xrec")
    said = {who: len(p.messages) for who, p in people.items()}
    for _ in range(3):  # past the deadline, then past the clock's next looks
        clock.advance(DROP_OUT_AFTER + 1)
        async with asyncio.timeout(30):
            await clock.looked()
    assert await _version(db, "xrec") == version
    assert await _assigned(db, "xrec") == before
    assert {who: len(p.messages) for who, p in people.items()} == said


@pytest.mark.parametrize("comes_back_with", ["/start", "Hi, I am back"])
async def test_a_silent_annotator_back_by_typing_hears_once_that_their_target_moved(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path, comes_back_with: str
) -> None:
    """Back by ``/start`` or a message (not a tap), they are not welcomed to the target
    that went to someone else: the store is asked first, they are told once, and shown
    what is theirs now."""
    clock = FakeClock()
    bundle = _with_drop_out(load_study("xrec"), "xrec", DROP_OUT_AFTER)
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db, clock=clock)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 3, clock))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(7800 + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(_waiting, timeout=15)
    silent, staying = sorted(await _assigned(db, "xrec"))
    [third] = set(codes) - {silent, staying}
    await rate_all(people[staying], point(1))
    clock.advance(DROP_OUT_AFTER + 1)
    await people[third].wait_for_text("There is more to rate", timeout=15)
    assert silent not in await _assigned(db, "xrec")

    back = people[silent]
    said = len(back.messages)
    await back.send_text(comes_back_with)
    await back.wait_for_text(MOVED, timeout=15)
    await back.wait_for_text("You have rated everything assigned to you", timeout=15)
    await back.send_text("/help")
    await back.wait_for_text("/pause", timeout=15)
    after = [m.text for m in back.messages[said:]]
    assert not any("Welcome back" in text for text in after), after
    assert sum(MOVED in text for text in after) == 1, after
