"""Simulated annotators of a study's annotation jobs, played through the emulator as
``ozlab demo`` plays its participants: each opens their invitation link, reads the brief and
what is shown, and answers every item as a person would (buttons, options, a ranking, text).

What an annotator on Telegram cannot see, the simulation reads from the bot's own store:
which target is on screen. In a pairwise (ACUTE-Eval) job, an onboarding pair gets its
known answer most of the time and a real pair's choice follows the scenario's
``simulation.votes`` strengths (Bradley-Terry), as a participant's vote does. In a rating
job each target has a truth every annotator shares and each annotator errs now and then
(``bot.pilot.simulation.rating``). The invitations are drawn from a seeded source and
everything else from the seed, so the same seed writes the same database.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from bot.annotation.invitations import invite_annotators
from bot.core.annotation import AnnotationTask
from bot.engine.annotating.pairs import known_showing, shown_name, shown_systems
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from bot.pilot.simulation.answering import Question, find_question, merged, preferred
from bot.pilot.simulation.pace import Pace, SimulatedClock
from bot.pilot.simulation.rating import Rater
from bot.store.interface import StudyStore
from scenarios.jobs import AnnotationJob
from scenarios.models import StudyBundle

KNOWN_ANSWER_SHARE = 0.9
"""How often a simulated annotator gives an onboarding pair's known answer (ACUTE-Eval's
threshold is 0.75: now and then one of them falls below it, as people do)."""
_TIMEOUT = 30.0
_NO_COMMENT = "No comment."


@dataclass(frozen=True)
class Annotated:
    """What one simulated annotator did: items answered, and whether they were let through
    a pairwise job's onboarding pairs (always, in a rating job)."""

    annotator: str
    answers: int
    qualified: bool


def pairwise_jobs(bundle: StudyBundle) -> list[AnnotationJob]:
    """The study's ACUTE-Eval jobs, in the order the study names them."""
    return [job for job in bundle.jobs.values() if job.kind == "pairwise"]


def simulated_jobs(bundle: StudyBundle) -> list[AnnotationJob]:
    """Every job simulated annotators play: the study's rating and pairwise jobs, in the
    order the study names them."""
    return list(bundle.jobs.values())


def _data(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def _asks(message: BotMessage) -> bool:
    """An annotation item with its buttons (an answer, a skip, its help)."""
    return not message.deleted and any(d[:1] == "n" and d[2:3] == ":" for d in _data(message))


class Judgement(Protocol):
    """How one simulated annotator answers the item on screen for the target shown."""

    def choose(self, task: AnnotationTask, question: Question, buttons: int) -> int: ...

    def toggle(self, task: AnnotationTask, question: Question, options: int) -> list[int]: ...

    def rank(self, task: AnnotationTask, question: Question, options: int) -> list[int]: ...

    def write(self, task: AnnotationTask, question: Question, can_skip: bool) -> str | None: ...


class PairJudge:
    """Which speaker one simulated annotator picks, question by question."""

    def __init__(self, bundle: StudyBundle, job: AnnotationJob, rng: random.Random) -> None:
        self.bundle = bundle
        self.job = job
        self.rng = rng
        self.last = 1

    def side(self, task: AnnotationTask) -> int:
        """1 for the speaker of the conversation shown first, 2 for the second's."""
        known = known_showing(self.job, shown_name(task.target.target, task.swapped))
        if known is not None:
            right = self.rng.random() < KNOWN_ANSWER_SHARE
            return 1 if known.better_first == right else 2
        first, second = shown_systems(task)
        if first is None or second is None:
            return self.rng.choice((1, 2))
        scenario = self.bundle.scenarios.get(task.target.scenario or "")
        plan = scenario.simulation if scenario and scenario.simulation else merged(self.bundle)
        return 1 if self.rng.random() < preferred(self.rng, plan, first, second) else 2

    def choose(self, task: AnnotationTask, question: Question, buttons: int) -> int:
        self.last = self.side(task)
        return min(self.last, buttons) - 1

    def toggle(self, task: AnnotationTask, question: Question, options: int) -> list[int]:
        return [self.rng.randrange(options)]

    def rank(self, task: AnnotationTask, question: Question, options: int) -> list[int]:
        return self.rng.sample(range(options), options)

    def write(self, task: AnnotationTask, question: Question, can_skip: bool) -> str | None:
        """No justification where it may be skipped; else the speaker chosen last."""
        return None if can_skip else self.bundle.study.texts.ann_speaker.format(side=self.last)


class AnnotatorPlayer:
    """One simulated annotator, from their link to the last target they are given (and to
    what is given them later: a third opinion where two disagreed, work moved from another)."""

    def __init__(
        self,
        p: Participant,
        bundle: StudyBundle,
        judge: Judgement,
        showing: Callable[[], Awaitable[AnnotationTask | None]],
        pace: Pace | None = None,
    ) -> None:
        self.p = p
        self.bundle = bundle
        self.texts = bundle.study.texts
        self.judge = judge
        self.showing = showing
        self.pace = pace
        self.qualified = True
        self._seen: dict[int, str] = {}
        self._since = 0  # the first message of the current round of work

    def _item(self, q: Participant) -> BotMessage | None:
        return next((m for m in reversed(q.messages[self._since :]) if _asks(m)), None)

    def _finished(self, q: Participant) -> bool:
        last = q.messages[-1] if len(q.messages) > self._since else None
        texts = self.texts
        endings = (texts.ann_all_done, texts.ann_not_qualified, texts.ann_nothing_yet)
        return last is not None and not _asks(last) and any(e in last.text for e in endings)

    def _read(self) -> None:
        """Read what the bot sent or edited since the last look (on the simulated clock)."""
        for message in self.p.messages:
            if self._seen.get(message.message_id) != message.text:
                self._seen[message.message_id] = message.text
                if self.pace is not None:
                    self.pace.read(message.text)

    async def play(self, code: str) -> int:
        """Every target given after the invitation link; how many items were answered."""
        await self._send(f"/start {code}")
        return await self._rate()

    async def resume(self) -> int:
        """The work the bot wrote about after this annotator had finished (in messages
        after the last one they read, sent already or still to come); how many items
        were answered."""
        return await self._rate()

    async def _rate(self) -> int:
        p = self.p
        answered = 0
        while True:
            await p.wait_for(lambda q: self._item(q) is not None or self._finished(q), _TIMEOUT)
            item = self._item(p)
            if item is None:
                self.qualified = self.texts.ann_not_qualified not in p.messages[-1].text
                self._since = len(p.messages)
                return answered
            before, count = tuple(_data(item)), len(p.messages)
            await self._answer(item)
            answered += 1

            def moved(
                q: Participant, m: BotMessage = item, was: tuple[str, ...] = before, n: int = count
            ) -> bool:
                return tuple(_data(m)) != was or len(q.messages) > n

            await p.wait_for(moved, _TIMEOUT)

    async def _answer(self, item: BotMessage) -> None:
        """One item: a button, options ticked or put in order, or a text typed (or skipped)."""
        datas = _data(item)
        kinds = {kind: [d for d in datas if d[1:2] == kind] for kind in "amrs"}
        task = await self.showing()
        question = find_question(self.bundle, item.text)
        if task is None:  # nothing open in the store: the first answer, as a hurried person
            first = kinds["a"] or kinds["s"]
            if first:
                await self._tap(first[0], item)
            else:
                await self._send(_NO_COMMENT)
        elif kinds["r"] or kinds["m"]:
            taps = kinds["r"] or kinds["m"]
            picked = (self.judge.rank if kinds["r"] else self.judge.toggle)(
                task, question, len(taps)
            )
            self._read()
            for index in picked:
                await self._tap(taps[index], item, look=False)
                await self.p.wait_for_answer()
            await self.p.wait_for(lambda _: any(d[1:2] == "d" for d in _data(item)), _TIMEOUT)
            done = next(d for d in _data(item) if d[1:2] == "d")
            await self._tap(done, item, look=False)
            await self.p.wait_for(lambda _: done not in _data(item), _TIMEOUT)
        elif kinds["a"]:
            index = self.judge.choose(task, question, len(kinds["a"]))
            await self._tap(kinds["a"][index], item)
        else:
            skip = kinds["s"][0] if kinds["s"] else None
            text = self.judge.write(task, question, skip is not None)
            if text is None and skip is not None:
                await self._tap(skip, item)
            else:
                await self._send(text or _NO_COMMENT)

    async def _send(self, text: str) -> None:
        self._read()
        if self.pace is not None:
            self.pace.type(text)
        await self.p.send_text(text)

    async def _tap(self, data: str, message: BotMessage, *, look: bool = True) -> None:
        if look:
            self._read()
        if self.pace is not None:
            self.pace.tap()
        await self.p.tap(data=data, message_id=message.message_id)


async def play_annotators(
    emulator: BotApiEmulator,
    store: StudyStore,
    bundle: StudyBundle,
    job: AnnotationJob,
    *,
    count: int,
    seed: int,
    clock: SimulatedClock,
    first_user: int,
) -> list[Annotated]:
    """``count`` simulated annotators of ``job``, invited as ``ozlab invite`` would (from a
    seeded source), who rate their targets one after another; then, while any of them has
    been given more (a third opinion where two disagreed), they rate that too. Each is
    marked simulated as soon as they are invited, so a demo killed midway leaves no one who
    looks like a person."""
    draw = random.Random(f"{seed}:annotators:{job.id}")
    invited = await invite_annotators(
        store, bundle.study.id, job.id, count, clock, choose=draw.choice
    )
    await store.mark_simulated_annotators([pseudonym for pseudonym, _ in invited.annotators])
    players: list[tuple[str, AnnotatorPlayer]] = []
    answered: dict[str, int] = {}
    for i, (pseudonym, code) in enumerate(invited.annotators):
        rng = random.Random(f"{seed}:annotator:{job.id}:{i}")
        judge: Judgement = (
            PairJudge(bundle, job, rng) if job.kind == "pairwise" else Rater(bundle, job, seed, rng)
        )
        player = AnnotatorPlayer(
            emulator.participant(first_user + i, first_name=f"Ann{i}"),
            bundle,
            judge,
            partial(store.next_annotation_target, pseudonym),
            Pace(clock, random.Random(f"{seed}:annotator-pace:{job.id}:{i}")),
        )
        players.append((pseudonym, player))
        answered[pseudonym] = await player.play(code)
    for _ in range(count):  # each round gives work only to someone who has not rated it
        given = [
            (pseudonym, player)
            for pseudonym, player in players
            if player.qualified and await store.next_annotation_target(pseudonym) is not None
        ]
        if not given:
            break
        for pseudonym, player in given:
            answered[pseudonym] += await player.resume()
    return [Annotated(name, answered[name], player.qualified) for name, player in players]
