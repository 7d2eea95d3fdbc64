"""A simulated participant playing a whole study through the emulator, as a person would:
reading the bot's messages, typing, and tapping buttons. Nothing here talks to the bot
except through Telegram's interface, so any shipped study can be played: consent,
screening, tasks (a chat, or rows to rate), ratings of single replies, questionnaires."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.emulator import BotMessage, Participant
from bot.engine.common import CONSENT_YES, FINISH
from bot.simulation.chatter import SmallTalker
from bot.simulation.policy import Experience, GiftSeeker
from scenarios.models import StudyBundle

_TURN_TIMEOUT = 30.0
_SETTLE = 5.0


@dataclass(frozen=True)
class Given:
    """One answer as the participant gave it: what was tapped or typed."""

    kind: str  # button | options | text | skip
    shown: str  # the button's text, the options' labels joined by "; ", or the typed text
    rating: bool = False  # a rating of a single reply, beside the chat


@dataclass(frozen=True)
class Played:
    exchanges: int
    answers: int
    finished: bool
    given: tuple[Given, ...] = ()


def _data(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def _more_messages_than(count: int) -> Callable[[Participant], bool]:
    """Until the bot has sent something after its first ``count`` messages (bound now, not
    when the loop that waits has moved on)."""
    return lambda p: len(p.messages) > count


def _buttons_changed(message: BotMessage, before: tuple[str, ...]) -> Callable[[Participant], bool]:
    """Until ``message``'s buttons are no longer ``before`` (edited in place)."""
    return lambda _: tuple(_data(message)) != before


def _asks(message: BotMessage, channel: str = "") -> bool:
    """Whether the message is a questionnaire item (of the given channel) with buttons."""
    return any(d.startswith(f"{channel}{a}:") for d in _data(message) for a in "amds")


def _button_text(message: BotMessage, data: str) -> str:
    return next(text for row in message.keyboard for text, d in row if d == data)


def _survey_item(p: Participant) -> BotMessage | None:
    for message in reversed(p.messages):
        if _asks(message):
            return message
    return None


def _state(message: BotMessage) -> str:
    """The showing number the buttons carry: one per item shown, the same while toggling."""
    return next(d.split(":")[1] for d in _data(message) if d[:2] in ("a:", "m:", "d:", "s:"))


class StudyPlayer:
    """One simulated participant; every choice comes from its seeded generator."""

    def __init__(self, p: Participant, bundle: StudyBundle, rng: random.Random) -> None:
        self.p = p
        self.bundle = bundle
        self.rng = rng
        self.texts = bundle.study.texts
        self.handled: set[str] = set()
        self.briefs_seen: set[int] = set()  # message ids of the briefs already played
        self.exchanges = 0
        self.answers = 0
        self.experience = Experience()
        self.given: list[Given] = []

    def _ended(self, q: Participant) -> bool:
        endings = (self.texts.thanks, self.texts.not_eligible)
        return any(any(e in m.text for e in endings) for m in q.messages)

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

    async def play(self) -> Played:
        p = self.p
        await p.send_text("/start")
        await p.wait_for(lambda q: any(CONSENT_YES in _data(m) for m in q.messages), _TURN_TIMEOUT)
        await p.tap(data=CONSENT_YES)
        while True:
            await p.wait_for(
                lambda q: (
                    self._ended(q)
                    or self._pending_item(q) is not None
                    or self._new_brief(q) is not None
                ),
                _TURN_TIMEOUT,
            )
            if (brief := self._new_brief(p)) is not None:
                self.briefs_seen.add(brief.message_id)
                await self._chat(brief)
            elif (item := self._pending_item(p)) is not None:
                await self._answer(item)
            else:
                return Played(self.exchanges, self.answers, True, tuple(self.given))

    # --- the dialogue ---------------------------------------------------------------

    async def _chat(self, brief: BotMessage) -> None:
        scenario = next(
            s for s in self.bundle.scenarios.values() if s.title in brief.text.split("\n")[0]
        )
        limit = scenario.max_exchanges or 10
        if any(s.variant == "chat" for s in self.bundle.study.systems if s.type == "demo"):
            talker: GiftSeeker | SmallTalker = SmallTalker(self.rng, max_messages=min(limit, 8))
        else:
            talker = GiftSeeker(self.rng, max_messages=limit)
        try:
            await self._talk(talker, brief, limit, bool(scenario.exchange))
        finally:
            if isinstance(talker, GiftSeeker):
                self.experience = talker.experience()

    async def _talk(
        self, talker: GiftSeeker | SmallTalker, brief: BotMessage, limit: int, rates: bool
    ) -> None:
        p = self.p
        seen = len(p.messages)
        replies: list[str] = []
        sent = 0
        while _survey_item_after(p, brief) is None:
            message = talker.next_message(replies)
            if message is None:
                await p.send_text("/done")
                return
            await p.send_text(message)
            sent += 1
            self.exchanges += 1
            await p.wait_for(_more_messages_than(seen), _TURN_TIMEOUT)
            replies = [m.text for m in p.messages[seen:] if not _asks(m, "x")]
            first_new = seen
            seen = len(p.messages)
            talker.observe(replies)
            if rates:
                await self._rate_reply(first_new)
                seen = len(p.messages)
            if talker.succeeded or sent >= limit:
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
                    await p.send_text("/done")
                return

    async def _rate_reply(self, first_new: int) -> None:
        """Ratings of a single reply appear beside the chat; most people give them."""
        p = self.p

        def rating(q: Participant) -> BotMessage | None:
            return next((m for m in q.messages[first_new:] if _asks(m, "x")), None)

        try:
            await p.wait_for(lambda q: rating(q) is not None or self._ended(q), _SETTLE)
        except TimeoutError:
            return
        message = rating(p)
        if message is None or self.rng.random() < 0.2:
            return
        for _ in range(20):  # one item after another, edited in place, until it is done
            answers = [d for d in _data(message) if d.startswith("xa:")]
            if not answers:
                return
            before = tuple(_data(message))
            data = self.rng.choice(answers)
            self.given.append(Given("button", _button_text(message, data), rating=True))
            await p.tap(data=data, message_id=message.message_id)
            await p.wait_for(_buttons_changed(message, before), _TURN_TIMEOUT)

    # --- questionnaires ----------------------------------------------------------------

    async def _answer(self, item: BotMessage) -> None:
        self.handled.add(_state(item))
        self.answers += 1
        datas = _data(item)
        answers = [d for d in datas if d.startswith("a:")]
        toggles = [d for d in datas if d.startswith("m:")]
        if toggles:
            chosen = self.rng.sample(toggles, k=self.rng.randint(1, min(2, len(toggles))))
            for data in chosen:
                await self.p.tap(data=data, message_id=item.message_id)
                await self.p.wait_for_answer()
            labels = [_button_text(item, d)[2:] for d in sorted(chosen, key=toggles.index)]
            self.given.append(Given("options", "; ".join(labels)))
            done = next(d for d in datas if d.startswith("d:"))
            await self.p.tap(data=done, message_id=item.message_id)
        elif answers:
            if "native speaker" in item.text.lower():
                value = 1 if self.rng.random() < 0.9 else len(answers)  # "Yes" comes first
            else:  # buttons are in scale order: rate 1..n and tap it
                value = GiftSeeker(self.rng).rate(item.text, 1, len(answers), self.experience)
            self.given.append(Given("button", _button_text(item, answers[value - 1])))
            await self.p.tap(data=answers[value - 1], message_id=item.message_id)
        else:
            comment = GiftSeeker(self.rng).comment(self.experience)
            skip = next((d for d in datas if d.startswith("s:")), None)
            if comment or skip is None:
                self.given.append(Given("text", comment or "It was fine."))
                await self.p.send_text(comment or "It was fine.")
            else:
                self.given.append(Given("skip", ""))
                await self.p.tap(data=skip, message_id=item.message_id)
        await self.p.wait_for(
            lambda q: (
                self._ended(q)
                or (self._pending_item(q) is not None)
                or self._new_brief(q) is not None
            ),
            _TURN_TIMEOUT,
        )


def _survey_item_after(p: Participant, brief: BotMessage) -> BotMessage | None:
    """A questionnaire item sent after the task's brief: the task is over."""
    item = _survey_item(p)
    return item if item is not None and item.message_id > brief.message_id else None
