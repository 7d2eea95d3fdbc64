"""The crash run for annotators, beside the participants' one (``tests/crash_support.py``):
annotators rate the shipped HRI CUES job in Telegram while ``ozlab run`` (a real process) is
killed with SIGKILL at random moments (within 60 ms of an annotator's tap or typed answer,
or at any moment it is up) and started again on the same database.

An annotator acts as a person: they answer the item in front of them (the same answer for
the same exchange, whoever asks and however often), and when the bot has said nothing for a
few seconds after a kill they write once to ask where they were (the bot shows the item in
front of them again). What a run counts (:class:`AnnotatorCrashReport`): every annotator
reaches the end; each rates every target once (one scale rating per target); no update is
left unhandled, no internal error is recorded, nothing is logged as an error, and SQLite
finds the file sound.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from bot.core.annotation import AnnotationTarget
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.pilot.emulator.waiting import Waiters
from bot.store.model import AnnotationRating
from scenarios.loading import load_study
from tests.annotating_support import (
    ALL_DONE,
    by_exchange,
    current_item,
    data_of,
    invite,
    play,
    stored,
)
from tests.crash_support import TOKEN, log_records
from tests.e2e_support import OzlabProcesses
from tests.fuzz_support import integrity, left_unhandled
from tests.store_reads import read_tables

JOB = "hri-cues"
RATIONALE = "hri-cues-overall.rationale"
_NUDGE_AFTER = 4.0  # seconds of silence after which a person asks where they were
_GIVE_UP = 60.0


@dataclass
class AnnotatorCrashReport:
    seed: int
    annotators: int = 0
    finished: int = 0
    kills: int = 0
    answers: int = 0
    nudges: int = 0
    ratings_missing: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    logged_errors: list[str] = field(default_factory=list)
    internal_errors: int = 0
    left_unhandled: int = 0
    integrity: str = ""

    def problems(self) -> list[str]:
        found = [
            f"{what} ({len(items)}): {items[:3]}"
            for what, items in (
                ("annotators that failed", self.failures),
                ("ratings missing or twice", self.ratings_missing),
                ("errors logged", self.logged_errors),
            )
            if items
        ]
        if self.finished != self.annotators:
            found.append(f"annotators finished: {self.finished} of {self.annotators}")
        if self.internal_errors:
            found.append(f"internal_error events: {self.internal_errors}")
        if self.left_unhandled:
            found.append(f"updates left unhandled in the inbox: {self.left_unhandled}")
        if self.integrity != "ok":
            found.append(f"integrity_check: {self.integrity}")
        return found

    def summary(self) -> str:
        return (
            f"seed {self.seed} · {self.finished} of {self.annotators} annotators finished ·"
            f" {self.kills} kills · {self.answers} answers · {self.nudges} nudges after a kill"
        )


@dataclass
class _Annotator:
    p: Participant
    shift: int
    waiting: bool = False
    answers: int = 0
    nudges: int = 0
    watchers: Waiters = field(default_factory=Waiters)

    def _set_waiting(self, waiting: bool) -> None:
        self.waiting = waiting
        self.watchers.wake()

    async def rate_all(self, code: str) -> None:
        p, choose = self.p, by_exchange(self.shift)
        await self._step(p.send_text(f"/start {code}"), _ready)
        while not _done(p):
            await self._step(None, _ready)
            message = current_item(p)
            if message is None:
                continue
            label = choose(message)
            before, count = tuple(data_of(message)), len(p.messages)

            def moved(q: Participant, was: tuple[str, ...] = before, n: int = count) -> bool:
                item = current_item(q)
                return (
                    _done(q) or len(q.messages) > n or item is None or tuple(data_of(item)) != was
                )

            if label is None:
                act = p.send_text("Smooth, and they laughed twice.")
            else:
                act = p.tap(text=label, message_id=message.message_id)
            self.answers += 1
            await self._step(act, moved)

    async def _step(
        self, act: Awaitable[object] | None, moved: Callable[[Participant], bool]
    ) -> None:
        """Act, then wait for the bot to move; a silence (a kill) gets one nudge a while."""
        self._set_waiting(True)
        try:
            if act is not None:
                await act
            deadline = time.monotonic() + _GIVE_UP
            while True:
                try:
                    await self.p.wait_for(moved, timeout=_NUDGE_AFTER)
                    return
                except (TimeoutError, AssertionError):
                    if time.monotonic() > deadline:
                        raise
                    self.nudges += 1
                    await self.p.send_text("hello? where was I")
        finally:
            self._set_waiting(False)


def _ready(p: Participant) -> bool:
    """An item to answer is on screen, or all is rated."""
    return current_item(p) is not None or _done(p)


def _done(p: Participant) -> bool:
    return bool(p.messages) and ALL_DONE in p.messages[-1].text


async def run_annotator_crash(
    workdir: Path, *, seed: int, annotators: int = 2, kills: int = 3
) -> AnnotatorCrashReport:
    rng = random.Random(seed)
    report = AnnotatorCrashReport(seed, annotators=annotators)
    bundle = load_study(JOB)
    async with BotApiEmulator(TOKEN, call_log_size=10**6) as emulator:
        ozlab = OzlabProcesses(emulator, workdir)
        try:
            bot = await ozlab.start(study=JOB)
            await play(emulator, bundle, participants=2)
            codes = await invite(ozlab.db, JOB, annotators)
            people = [
                _Annotator(emulator.participant(8_100_000 + i, first_name=f"Ann{i}"), i % 2)
                for i in range(annotators)
            ]
            watchers = Waiters()
            for person in people:
                person.watchers = watchers
            rating = [
                asyncio.create_task(person.rate_all(code))
                for person, (_, code) in zip(people, codes, strict=True)
            ]
            for index in range(kills):
                if index % 2 == 0:  # within 60 ms of an annotator's answer
                    # Someone waits for the bot, or nobody will: the rating ended (its
                    # outcome is checked below, not hidden behind this wait's timeout).
                    await watchers.until(
                        lambda: any(p.waiting for p in people) or all(t.done() for t in rating),
                        30,
                        lambda: "nobody rating",
                    )
                    await asyncio.sleep(rng.uniform(0, 0.06))
                else:
                    await asyncio.sleep(rng.uniform(0.05, 0.8))
                bot.kill_now()
                await bot.finish()
                report.kills += 1
                bot = await ozlab.start(study=JOB)
            results = await asyncio.gather(*rating, return_exceptions=True)
            report.failures = [
                f"annotator {i}: {r!r}; {p.p.describe()}"
                for i, (p, r) in enumerate(zip(people, results, strict=True))
                if isinstance(r, BaseException)
            ]
            report.finished = sum(1 for p in people if _done(p.p))
            report.answers = sum(p.answers for p in people)
            report.nudges = sum(p.nudges for p in people)
            # A last nudge may still be on its way: once confirmed, a clean stop handles it.
            await emulator.wait_until(lambda e: e.pending_updates == 0, timeout=30)
            await bot.terminate()
        finally:
            await ozlab.close()
        for process in ozlab.started:
            report.logged_errors += [
                r
                for r in log_records(process.stderr)
                if re.search(r"Traceback|update.* failed| ERROR | CRITICAL ", r)
            ]
    tables = await read_tables(ozlab.db)
    ratings = await stored(ozlab.db, lambda s: s.annotation_ratings())
    targets = await stored(ozlab.db, lambda s: s.annotation_targets(JOB))
    _check_ratings(report, ratings, targets, [pseudonym for pseudonym, _ in codes])
    report.internal_errors = sum(1 for e in tables["events"] if e["kind"] == "internal_error")
    report.left_unhandled = await left_unhandled(ozlab.db)
    report.integrity = integrity(ozlab.db)
    return report


def _check_ratings(
    report: AnnotatorCrashReport,
    ratings: list[AnnotationRating],
    targets: list[AnnotationTarget],
    annotators: list[str],
) -> None:
    """Every target rated once on the scale by each annotator, and the rationale typed."""
    for annotator in annotators:
        mine = [r for r in ratings if r.annotator == annotator]
        scale = Counter((r.target, r.level) for r in mine if r.item_id != RATIONALE)
        wanted = {(t.target, t.level) for t in targets}
        if set(scale) != wanted or any(n != 1 for n in scale.values()):
            report.ratings_missing.append(f"{annotator}: {len(scale)} of {len(wanted)} targets")
        if [r for r in mine if r.item_id == RATIONALE] == []:
            report.ratings_missing.append(f"{annotator}: the rationale")
