"""A simulated participant playing a whole study through the emulator, as a person would:
reading the bot's messages, typing, and tapping buttons. Nothing here talks to the bot
except through Telegram's interface, so any study can be played: consent, screening, tasks
(a chat, or rows to rate), ratings of single replies, questionnaires.

What the participant says and answers comes from a :class:`Mind`: the scenario's
``simulation:`` block (:class:`ScriptedMind`), or a language model (``ozlab pilot``). With a
:class:`~bot.pilot.simulation.pace.Pace` the participant reads and types at a person's speed on
the simulated clock the bot runs on."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.core.media import Speaker
from bot.engine.common import CONSENT_YES, FINISH
from bot.pilot.emulator import BotMessage, Participant
from bot.pilot.simulation.answering import (
    Question,
    ScriptedAnswers,
    find_question,
    merged,
    prefer,
    vote,
)
from bot.pilot.simulation.pace import Pace
from bot.pilot.simulation.platform import Arrival, PlatformVisit
from bot.pilot.simulation.script import ScriptedTalker
from questionnaires.models import MatrixItem, PreferenceItem
from scenarios.models import Scenario, StudyBundle
from scenarios.simulation import Simulation

_TURN_TIMEOUT = 30.0
_SETTLE = 5.0
_GLANCE = 0.2


@dataclass(frozen=True)
class Given:
    """One answer as the participant gave it: what was tapped or typed."""

    kind: str  # button | options | order | text | skip | vote (side by side: not an answer)
    shown: str  # the button's text, the options' labels joined by "; " (in order), or the text
    rating: bool = False  # a rating of a single reply, beside the chat


@dataclass(frozen=True)
class Played:
    exchanges: int
    answers: int
    finished: bool
    given: tuple[Given, ...] = ()
    waited_out: int = 0
    """Waits that ended by their time limit, not by what they waited for: each cost
    wall-clock seconds that a simulated participant has no reason to spend."""


def _data(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def _more_messages_than(count: int) -> Callable[[Participant], bool]:
    """Until the bot has sent something after its first ``count`` messages (bound now, not
    when the loop that waits has moved on)."""
    return lambda p: len(p.messages) > count


def _answered_after(count: int, heard: str) -> Callable[[Participant], bool]:
    """Until the bot has answered after its first ``count`` messages with more than what
    it heard in a voice note (``heard``: how its "I heard: …" line starts, which comes
    before the system's reply; empty after a typed line)."""
    return lambda p: any(not (heard and m.text.startswith(heard)) for m in p.messages[count:])


def _buttons_changed(message: BotMessage, before: tuple[str, ...]) -> Callable[[Participant], bool]:
    """Until ``message``'s buttons are no longer ``before`` (edited in place)."""
    return lambda _: tuple(_data(message)) != before


def _text_changed(message: BotMessage, before: str) -> Callable[[Participant], bool]:
    """Until ``message`` no longer reads ``before`` (edited in place)."""
    return lambda _: message.text != before


def _asks(message: BotMessage, channel: str = "") -> bool:
    """Whether the message is a questionnaire item (of the given channel) with buttons."""
    return any(d.startswith(f"{channel}{a}:") for d in _data(message) for a in "amdsr")


def _ballot(message: BotMessage) -> bool:
    """Whether the message is a side-by-side vote with its buttons."""
    return any(d.startswith("v:") for d in _data(message))


def _button_text(message: BotMessage, data: str) -> str:
    return next(text for row in message.keyboard for text, d in row if d == data)


def _survey_item(p: Participant) -> BotMessage | None:
    for message in reversed(p.messages):
        if _asks(message):
            return message
    return None


def _state(message: BotMessage, channel: str = "") -> str:
    """The showing number the buttons carry: one per item shown, the same while toggling."""
    actions = tuple(f"{channel}{a}:" for a in "amdsr")
    return next(d.split(":")[1] for d in _data(message) if d.startswith(actions))


class Talker(Protocol):
    """One task's side of the dialogue: the next message, or None to stop."""

    async def next_message(self, replies: list[str]) -> str | None: ...


class Mind(Protocol):
    """What a simulated participant says and how they answer."""

    def talker(self, scenario: Scenario) -> Talker: ...

    async def choose(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> int | None:
        """The index of the button to tap; None: the participant leaves the study here."""
        ...

    async def comment(self, question: Question, plan: Simulation, can_skip: bool) -> str | None:
        """A free-text answer; None: skip (where allowed)."""
        ...

    async def rank(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> list[int]:
        """A ranking's buttons in the order to tap them, first to last (every index once)."""
        ...


class ScriptedMind:
    """The scenario's ``simulation:`` block (or its brief, without one)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.answers = ScriptedAnswers(rng)

    def talker(self, scenario: Scenario) -> Talker:
        return ScriptedTalker(scenario, self.rng)

    async def choose(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> int | None:
        return self.answers.choose(question, len(labels), plan, system)

    async def comment(self, question: Question, plan: Simulation, can_skip: bool) -> str | None:
        return self.answers.comment(plan, can_skip)

    async def rank(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> list[int]:
        order = self.answers.rank(question, plan, system)
        if sorted(order) != list(range(len(labels))):  # not the item the message shows
            order = self.rng.sample(range(len(labels)), len(labels))
        return order


class Lookout(Protocol):
    """What the simulation knows and a participant's screen does not say: the system of
    the current session, and whether its task is still on (read from the store, which
    has the step committed before its messages go out)."""

    async def system(self) -> str | None: ...

    async def in_task(self) -> bool: ...

    async def met(self) -> tuple[str, ...]: ...

    async def sides(self) -> tuple[str, str] | None: ...


class StudyPlayer:
    """One simulated participant; every choice comes from its mind (seeded, when scripted)."""

    def __init__(
        self,
        p: Participant,
        bundle: StudyBundle,
        rng: random.Random,
        *,
        mind: Mind | None = None,
        pace: Pace | None = None,
        lookout: Lookout | None = None,
        visit: PlatformVisit | None = None,
        voice: Speaker | None = None,
    ) -> None:
        """``visit``: how they come from the recruitment platform, in a paid study;
        ``voice``: what speaks their lines as voice notes, in a task whose simulation has a
        ``voice_rate``."""
        self.p = p
        self.voice = voice
        self.heard = bundle.study.texts.heard.split("{transcript}")[0]
        self.visit = visit
        self.bundle = bundle
        self.rng = rng
        self.mind: Mind = mind or ScriptedMind(rng)
        self.pace = pace
        self.lookout = lookout
        self.texts = bundle.study.texts
        self.handled: set[str] = set()
        self.briefs_seen: set[int] = set()  # message ids of the briefs already played
        self.exchanges = 0
        self.answers = 0
        self.given: list[Given] = []
        self.waited_out = 0
        self.plan: Simulation = merged(bundle)  # the current task's, or the study's
        self._seen: dict[int, str] = {}  # message id -> its text when last read

    def _ended(self, q: Participant) -> bool:
        endings = (self.texts.thanks, self.texts.not_eligible)
        return any(any(e in m.text for e in endings) for m in q.messages)

    def _turned_away(self, q: Participant) -> bool:
        """Every cell of the design was full (``design.quota``) when they came or agreed."""
        return any(self.texts.study_full in m.text for m in q.messages)

    def _new_brief(self, q: Participant) -> BotMessage | None:
        """A task's brief not played yet (its "Finish task" button goes when the task ends,
        so a brief is known by its button while it is the current one)."""
        fresh = [
            m for m in q.messages if FINISH in _data(m) and m.message_id not in self.briefs_seen
        ]
        return fresh[-1] if fresh else None

    def _pending_item(self, q: Participant) -> BotMessage | None:
        item = _survey_item(q)
        return item if item is not None and _state(item) not in self.handled else None

    # --- a person's pace -----------------------------------------------------------

    def _read(self) -> None:
        """Read what the bot sent or edited since the last look (on the simulated clock)."""
        for message in self.p.messages:
            if self._seen.get(message.message_id) != message.text:
                self._seen[message.message_id] = message.text
                if self.pace is not None:
                    self.pace.read(message.text)

    async def _send(self, text: str) -> None:
        self._read()
        if self.pace is not None:
            self.pace.type(text)
        await self.p.send_text(text)

    async def _say(self, text: str, voice_rate: float) -> bool:
        """Type ``text``, or (at ``voice_rate``, when there is a voice) speak it as a voice
        note; whether it was spoken."""
        if self.voice is None or not voice_rate or self.rng.random() >= voice_rate:
            await self._send(text)
            return False
        self._read()
        spoken = await self.voice.speak(text)
        if self.pace is not None:
            self.pace.type(text)  # recording it takes about as long as typing it
        await self.p.send_voice(spoken.audio, duration=max(1, round(spoken.audio_seconds)))
        return True

    async def _tap(
        self, data: str, message: BotMessage | None = None, *, look: bool = True
    ) -> bool:
        """Tap ``data`` (on ``message``); False, and nothing tapped, when the bot has taken
        that button away meanwhile: a task that ends closes the reply's rating a
        participant may be in the middle of."""
        if message is not None and data not in _data(message):
            return False
        if look:
            self._read()
        if self.pace is not None:
            self.pace.tap()
        if message is None:
            await self.p.tap(data=data)
        else:
            await self.p.tap(data=data, message_id=message.message_id)
        return True

    # --- the study -----------------------------------------------------------------

    async def play(self) -> Played:
        p, visit = self.p, self.visit
        await self._send(visit.first_start if visit is not None else "/start")
        await p.wait_for(
            lambda q: self._turned_away(q) or any(CONSENT_YES in _data(m) for m in q.messages),
            _TURN_TIMEOUT,
        )
        if self._turned_away(p):
            return self._played(False)
        if visit is not None and visit.arrival is Arrival.LATE:
            agreements = sum(CONSENT_YES in _data(m) for m in p.messages)
            await self._send(visit.link_start)  # the agreement again, the id bound
            await p.wait_for(
                lambda q: sum(CONSENT_YES in _data(m) for m in q.messages) > agreements,
                _TURN_TIMEOUT,
            )
        await self._tap(CONSENT_YES)
        played = await self._tasks(leaving=visit is not None and visit.arrival is Arrival.LEAVES)
        if visit is not None and visit.arrival is Arrival.TWICE:
            seen = len(p.messages)
            await self._send(visit.link_start)  # the same id again: nothing changes
            await p.wait_for(_more_messages_than(seen), _TURN_TIMEOUT)
        return played

    async def _tasks(self, *, leaving: bool) -> Played:
        """The study after consent; ``leaving``: gone once the first task shows."""
        p = self.p
        while True:
            await p.wait_for(
                lambda q: (
                    self._ended(q)
                    or self._turned_away(q)
                    or self._pending_item(q) is not None
                    or self._new_brief(q) is not None
                ),
                _TURN_TIMEOUT,
            )
            if self._turned_away(p):
                return self._played(False)
            if leaving and not self._ended(p):
                return self._played(False)
            if (brief := self._new_brief(p)) is not None:
                self.briefs_seen.add(brief.message_id)
                await self._chat(brief)
            elif (item := self._pending_item(p)) is not None:
                if not await self._answer(item):
                    return self._played(False)
            else:
                return self._played(True)

    def _played(self, finished: bool) -> Played:
        return Played(self.exchanges, self.answers, finished, tuple(self.given), self.waited_out)

    # --- the dialogue ---------------------------------------------------------------

    async def _chat(self, brief: BotMessage) -> None:
        scenario = next(
            s for s in self.bundle.scenarios.values() if s.title in brief.text.split("\n")[0]
        )
        self.plan = scenario.simulation or merged(self.bundle)
        limit = scenario.max_exchanges or 10
        votes = scenario.kind == "side_by_side"
        spoken = self.plan.voice_rate if "voice" in scenario.media.participant_sends else 0.0
        talker = self.mind.talker(scenario)
        await self._talk(talker, brief, limit, bool(scenario.exchange), votes, spoken)

    async def _talk(
        self,
        talker: Talker,
        brief: BotMessage,
        limit: int,
        rates: bool,
        votes: bool = False,
        voice_rate: float = 0.0,
    ) -> None:
        p = self.p
        seen = len(p.messages)
        # What came with the brief (an opening line) is the first thing to answer.
        replies = [m.text for m in p.messages if m.message_id > brief.message_id]
        sent = 0
        while _survey_item_after(p, brief) is None:
            message = await talker.next_message(replies)
            if message is None:
                await self._send("/done")
                return
            spoke = await self._say(message, voice_rate)
            sent += 1
            self.exchanges += 1
            await p.wait_for(_answered_after(seen, self.heard if spoke else ""), _TURN_TIMEOUT)
            first_new = seen
            if votes:
                await self._vote(first_new)
            replies = [m.text for m in p.messages[seen:] if not _asks(m, "x") and not _ballot(m)]
            seen = len(p.messages)
            if rates:
                await self._rate_reply(first_new)
                seen = len(p.messages)
            if sent >= limit:
                # The task should end now: wait for what follows rather than talk over it.
                try:
                    await p.wait_for(
                        lambda q: (
                            _survey_item_after(q, brief) is not None
                            or self._new_brief(q) is not None
                            or self._ended(q)
                        ),
                        _SETTLE,
                    )
                except TimeoutError:
                    self.waited_out += 1
                    await self._send("/done")
                return
            if await self._task_over(brief):
                return

    async def _task_over(self, brief: BotMessage) -> bool:
        """Whether the reply ended the task (a questionnaire or the next brief follows)."""
        if self.lookout is not None:
            return not await self.lookout.in_task()
        try:  # without a lookout: a moment for what would follow the reply
            await self.p.wait_for(
                lambda q: (
                    _survey_item_after(q, brief) is not None
                    or self._new_brief(q) is not None
                    or self._ended(q)
                ),
                _GLANCE,
            )
        except TimeoutError:
            self.waited_out += 1
            return False
        return True

    async def _rate_reply(self, first_new: int) -> None:
        """Ratings of a single reply appear beside the chat; most people give them. The
        reply that ends the task has none: known from the store (the step is committed
        before its messages go out) or from the task's end showing, never by waiting."""
        p = self.p
        if self.lookout is not None and not await self.lookout.in_task():
            return

        def rating(q: Participant) -> BotMessage | None:
            return next((m for m in q.messages[first_new:] if _asks(m, "x")), None)

        def over(q: Participant) -> bool:
            return self._ended(q) or any(
                self.texts.task_over in m.text for m in q.messages[first_new:]
            )

        try:
            await p.wait_for(lambda q: rating(q) is not None or over(q), _SETTLE)
        except TimeoutError:
            self.waited_out += 1
            return
        message = rating(p)
        if message is None or self.rng.random() < 0.2:
            return
        for _ in range(20):  # one item after another, edited in place, until it is done
            datas = _data(message)
            answers = [d for d in datas if d.startswith("xa:")]
            ranks = [d for d in datas if d.startswith("xr:")]
            toggles = [d for d in datas if d.startswith("xm:")]
            if not answers and not ranks and not toggles:
                return
            before = tuple(datas)
            question = find_question(self.bundle, message.text)
            if ranks:
                await self._rank(message, ranks, question, "x", rating=True)
            elif toggles:
                await self._toggle(message, toggles, "x", rating=True)
            elif isinstance(question.item, MatrixItem):
                await self._answer_statements(message, question.item, question, "x")
            else:
                labels = [_button_text(message, d) for d in answers]
                index = await self.mind.choose(question, labels, self.plan, await self._system())
                data = answers[index if index is not None else self.rng.randrange(len(answers))]
                self.given.append(Given("button", _button_text(message, data), rating=True))
                await self._tap(data, message)
            await p.wait_for(_buttons_changed(message, before), _TURN_TIMEOUT)

    async def _vote(self, first_new: int) -> None:
        """Side by side: both replies read, then the vote (a turn with a failed side has
        no ballot: nothing to vote on)."""
        p = self.p
        texts = self.bundle.study.texts

        def ballot(q: Participant) -> BotMessage | None:
            return next((m for m in q.messages[first_new:] if _ballot(m)), None)

        failed = texts.arena_side_failed.split("{")[0]
        try:
            await p.wait_for(
                lambda q: (
                    ballot(q) is not None
                    or any(failed in m.text for m in q.messages[first_new:])
                    or self._ended(q)
                ),
                _SETTLE,
            )
        except TimeoutError:
            self.waited_out += 1
            return
        message = ballot(p)
        sides = await self.lookout.sides() if self.lookout is not None else None
        if message is None:
            return
        choice = vote(self.rng, self.plan, *sides) if sides else self.rng.randrange(3)
        data = _data(message)[choice]
        self.given.append(Given("vote", _button_text(message, data)))
        await self._tap(data, message)
        await p.wait_for(lambda _: not _data(message), _TURN_TIMEOUT)

    async def _system(self) -> str | None:
        return await self.lookout.system() if self.lookout is not None else None

    # --- questionnaires ----------------------------------------------------------------

    async def _answer(self, item: BotMessage) -> bool:
        """Answer one item; False: the participant left the study here."""
        self.handled.add(_state(item))
        self.answers += 1
        datas = _data(item)
        answers = [d for d in datas if d.startswith("a:")]
        toggles = [d for d in datas if d.startswith("m:")]
        ranks = [d for d in datas if d.startswith("r:")]
        question = find_question(self.bundle, item.text)
        if ranks:
            await self._rank(item, ranks, question)
        elif toggles:
            await self._toggle(item, toggles)
        elif answers and isinstance(question.item, MatrixItem):
            await self._answer_statements(item, question.item, question)
        elif answers and isinstance(question.item, PreferenceItem) and self.lookout is not None:
            met = await self.lookout.met()
            preferred = prefer(self.rng, self.plan, question.item, met)
            self.given.append(Given("button", _button_text(item, answers[preferred])))
            await self._tap(answers[preferred], item)
        elif answers:
            labels = [_button_text(item, d) for d in answers]
            index = await self.mind.choose(question, labels, self.plan, await self._system())
            if index is None:
                return False
            self.given.append(Given("button", labels[index]))
            await self._tap(answers[index], item)
        else:
            skip = next((d for d in datas if d.startswith("s:")), None)
            comment = await self.mind.comment(question, self.plan, skip is not None)
            if comment or skip is None:
                self.given.append(Given("text", comment or "No comment."))
                await self._send(comment or "No comment.")
            else:
                self.given.append(Given("skip", ""))
                await self._tap(skip, item)
        await self.p.wait_for(
            lambda q: (
                self._ended(q)
                or (self._pending_item(q) is not None)
                or self._new_brief(q) is not None
            ),
            _TURN_TIMEOUT,
        )
        return True

    async def _rank(
        self,
        message: BotMessage,
        ranks: list[str],
        question: Question,
        channel: str = "",
        *,
        rating: bool = False,
    ) -> None:
        """A ranking's options tapped first to last, then "Done" (which comes once every
        option has its place), until the bot has taken the order."""
        labels = [_button_text(message, d) for d in ranks]
        order = await self.mind.rank(question, labels, self.plan, await self._system())
        done = f"{channel}d:{_state(message, channel)}"
        self._read()
        for place in order:
            if not await self._tap(ranks[place], message, look=False):
                return
            await self.p.wait_for_answer()
        self.given.append(Given("order", "; ".join(labels[i] for i in order), rating=rating))
        await self.p.wait_for(lambda _: done in _data(message) or not _data(message), _TURN_TIMEOUT)
        if await self._tap(done, message, look=False):
            await self.p.wait_for(lambda _: done not in _data(message), _TURN_TIMEOUT)

    async def _toggle(
        self, message: BotMessage, toggles: list[str], channel: str = "", *, rating: bool = False
    ) -> None:
        """One or two options of a multiple choice ticked, then "Done", until the bot has
        taken them."""
        chosen = self.rng.sample(toggles, k=self.rng.randint(1, min(2, len(toggles))))
        done = next(d for d in _data(message) if d.startswith(f"{channel}d:"))
        self._read()
        labels = [_button_text(message, d)[2:] for d in sorted(chosen, key=toggles.index)]
        for data in chosen:
            if not await self._tap(data, message, look=False):
                return
            await self.p.wait_for_answer()
        self.given.append(Given("options", "; ".join(labels), rating=rating))
        if await self._tap(done, message, look=False):
            await self.p.wait_for(lambda _: done not in _data(message), _TURN_TIMEOUT)

    async def _answer_statements(
        self, message: BotMessage, matrix: MatrixItem, question: Question, channel: str = ""
    ) -> None:
        """A matrix's statements one after another in the same message, each answered as
        the scale item it is stored as (its own settings, its construct's trait)."""
        state = _state(message, channel)
        for statement in matrix.statement_items():
            answers = [d for d in _data(message) if d.startswith(f"{channel}a:{state}:")]
            if not answers:
                return
            labels = [_button_text(message, d) for d in answers]
            asked = Question(message.text, statement, question.instrument)
            index = await self.mind.choose(asked, labels, self.plan, await self._system())
            chosen = index if index is not None else self.rng.randrange(len(answers))
            self.given.append(Given("button", labels[chosen], rating=channel == "x"))
            before = message.text
            await self._tap(answers[chosen], message)
            await self.p.wait_for(_text_changed(message, before), _TURN_TIMEOUT)


def _survey_item_after(p: Participant, brief: BotMessage) -> BotMessage | None:
    """A questionnaire item sent after the task's brief: the task is over."""
    item = _survey_item(p)
    return item if item is not None and item.message_id > brief.message_id else None
