"""Simulated annotators of a pairwise (ACUTE-Eval) job, played through the emulator as
``ozlab demo`` plays its participants: each opens their invitation link, reads the brief and
the two conversations of each pair, and taps a speaker for every forced choice.

What an annotator on Telegram cannot see, the simulation reads from the bot's own store:
which pair is on screen (an onboarding pair's known answer, or a real pair's two systems).
An onboarding pair gets its known answer most of the time; a real pair's choice follows the
scenario's ``simulation.votes`` strengths (Bradley-Terry), as a participant's vote does. The
invitations are drawn from a seeded source and everything else from the seed, so the same
seed writes the same database.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from bot.annotation.invitations import invite_annotators
from bot.core.annotation import AnnotationTask
from bot.engine.annotating.pairs import known_showing
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from bot.pilot.simulation.answering import merged, preferred
from bot.pilot.simulation.pace import Pace, SimulatedClock
from bot.store.interface import StudyStore
from scenarios.jobs import AnnotationJob
from scenarios.models import StudyBundle

KNOWN_ANSWER_SHARE = 0.9
"""How often a simulated annotator gives an onboarding pair's known answer (ACUTE-Eval's
threshold is 0.75: now and then one of them falls below it, as people do)."""
_TIMEOUT = 30.0


@dataclass(frozen=True)
class Compared:
    """What one simulated annotator did: choices tapped, and whether they were let through
    the onboarding pairs."""

    annotator: str
    choices: int
    qualified: bool


def pairwise_jobs(bundle: StudyBundle) -> list[AnnotationJob]:
    """The study's ACUTE-Eval jobs, in the order the study names them."""
    return [job for job in bundle.jobs.values() if job.kind == "pairwise"]


def _data(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def _asks(message: BotMessage) -> bool:
    """An annotation item with its buttons (an answer, a skip, its help)."""
    return not message.deleted and any(d[:1] == "n" and d[2:3] == ":" for d in _data(message))


def _item(p: Participant) -> BotMessage | None:
    return next((m for m in reversed(p.messages) if _asks(m)), None)


class PairJudge:
    """Which speaker one simulated annotator picks, question by question."""

    def __init__(self, bundle: StudyBundle, job: AnnotationJob, rng: random.Random) -> None:
        self.bundle = bundle
        self.job = job
        self.rng = rng

    def side(self, task: AnnotationTask) -> int:
        """1 for the speaker of the conversation shown first, 2 for the second's."""
        known = known_showing(self.job, task.target.target)
        if known is not None:
            right = self.rng.random() < KNOWN_ANSWER_SHARE
            return 1 if known.better_first == right else 2
        first, second = task.target.system, task.second_system
        if first is None or second is None:
            return self.rng.choice((1, 2))
        scenario = self.bundle.scenarios.get(task.target.scenario or "")
        plan = scenario.simulation if scenario and scenario.simulation else merged(self.bundle)
        return 1 if self.rng.random() < preferred(self.rng, plan, first, second) else 2


class AnnotatorPlayer:
    """One simulated annotator, from their link to the last pair they are given."""

    def __init__(
        self,
        p: Participant,
        bundle: StudyBundle,
        judge: PairJudge,
        showing: Callable[[], Awaitable[AnnotationTask | None]],
        pace: Pace | None = None,
    ) -> None:
        self.p = p
        self.texts = bundle.study.texts
        self.judge = judge
        self.showing = showing
        self.pace = pace
        self._seen: dict[int, str] = {}

    def _finished(self, q: Participant) -> bool:
        last = q.messages[-1] if q.messages else None
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

    async def play(self, code: str) -> tuple[int, bool]:
        """Every pair given, then: the choices tapped, and whether they passed onboarding."""
        p = self.p
        await self._send(f"/start {code}")
        choices, side = 0, 1
        while True:
            await p.wait_for(lambda q: _item(q) is not None or self._finished(q), _TIMEOUT)
            item = _item(p)
            if item is None:
                return choices, self.texts.ann_not_qualified not in p.messages[-1].text
            before, count = tuple(_data(item)), len(p.messages)
            answers = [d for d in _data(item) if d[1:2] == "a"]
            skip = next((d for d in _data(item) if d[1:2] == "s"), None)
            if answers:
                task = await self.showing()
                side = self.judge.side(task) if task is not None else 1
                await self._tap(answers[min(side, len(answers)) - 1], item)
                choices += 1
            elif skip is not None:
                await self._tap(skip, item)
            else:  # a justification nobody may skip: the speaker chosen last
                await self._send(self.texts.ann_speaker.format(side=side))

            def moved(
                q: Participant, m: BotMessage = item, was: tuple[str, ...] = before, n: int = count
            ) -> bool:
                return tuple(_data(m)) != was or len(q.messages) > n

            await p.wait_for(moved, _TIMEOUT)

    async def _send(self, text: str) -> None:
        self._read()
        if self.pace is not None:
            self.pace.type(text)
        await self.p.send_text(text)

    async def _tap(self, data: str, message: BotMessage) -> None:
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
) -> list[Compared]:
    """``count`` simulated annotators of ``job``, invited as ``ozlab invite`` would (from a
    seeded source), who compare their pairs one after another; each is marked simulated as
    soon as they are invited, so a demo killed midway leaves no one who looks like a person."""
    draw = random.Random(f"{seed}:annotators:{job.id}")
    invited = await invite_annotators(
        store, bundle.study.id, job.id, count, clock, choose=draw.choice
    )
    await store.mark_simulated_annotators([pseudonym for pseudonym, _ in invited.annotators])
    done: list[Compared] = []
    for i, (pseudonym, code) in enumerate(invited.annotators):
        rng = random.Random(f"{seed}:annotator:{job.id}:{i}")
        player = AnnotatorPlayer(
            emulator.participant(first_user + i, first_name=f"Ann{i}"),
            bundle,
            PairJudge(bundle, job, rng),
            partial(store.next_annotation_target, pseudonym),
            Pace(clock, random.Random(f"{seed}:annotator-pace:{job.id}:{i}")),
        )
        choices, qualified = await player.play(code)
        done.append(Compared(pseudonym, choices, qualified))
    return done
