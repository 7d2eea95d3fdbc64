"""A simulated participant playing a whole study through the emulator, as a person would:
reading the bot's messages, typing, and tapping buttons. Nothing here talks to the bot
except through Telegram's interface."""

from __future__ import annotations

from dataclasses import dataclass

from bot.emulator import BotMessage, Participant
from bot.engine.common import CONSENT_YES, FINISH
from bot.simulation.policy import GiftSeeker

_TURN_TIMEOUT = 30.0


@dataclass(frozen=True)
class Played:
    exchanges: int
    answers: int
    finished: bool


def _survey_item(p: Participant) -> BotMessage | None:
    """The newest message that asks a question (answer or skip buttons)."""
    for message in reversed(p.messages):
        if any(data and data[:2] in ("a:", "s:") for row in message.keyboard for _, data in row):
            return message
    return None


def _item_state(message: BotMessage | None) -> tuple[int, int] | None:
    return None if message is None else (message.message_id, message.edit_count)


async def play_gift_task(
    p: Participant, seeker: GiftSeeker, *, max_exchanges: int, thanks: str
) -> Played:
    """Consent, chat until done, then answer every questionnaire item."""
    await p.send_text("/start")
    await p.wait_for(lambda q: any(_has(m, CONSENT_YES) for m in q.messages), _TURN_TIMEOUT)
    await p.tap(data=CONSENT_YES)
    await p.wait_for(lambda q: any(_has(m, FINISH) for m in q.messages), _TURN_TIMEOUT)
    seen = len(p.messages)
    replies: list[str] = []
    exchanges = 0
    while _survey_item(p) is None:
        message = seeker.next_message(replies)
        if message is None:
            await p.send_text("/done")
            break
        await p.send_text(message)
        exchanges += 1
        await p.wait_for(lambda q, n=seen: len(q.messages) > n, _TURN_TIMEOUT)
        replies = [m.text for m in p.messages[seen:]]
        seen = len(p.messages)
        seeker.observe(replies)
        if seeker.succeeded or exchanges >= max_exchanges:
            # The task should end now: wait for its questionnaire rather than talk over it.
            try:
                await p.wait_for(lambda q: _survey_item(q) is not None, 5.0)
            except TimeoutError:
                await p.send_text("/done")
            break
    answers = await _answer_questionnaires(p, seeker, thanks)
    return Played(exchanges, answers, finished=True)


def _has(message: BotMessage, data: str) -> bool:
    return any(d == data for row in message.keyboard for _, d in row)


async def _answer_questionnaires(p: Participant, seeker: GiftSeeker, thanks: str) -> int:
    experience = seeker.experience()
    answered: set[tuple[int, int]] = set()
    answers = 0

    def ready(q: Participant) -> bool:
        if any(thanks in m.text for m in q.messages):
            return True
        state = _item_state(_survey_item(q))
        return state is not None and state not in answered

    while True:
        await p.wait_for(ready, _TURN_TIMEOUT)
        item = _survey_item(p)
        state = _item_state(item)
        if item is None or state in answered:
            return answers
        answered.add(state)  # type: ignore[arg-type]
        datas = [data for row in item.keyboard for _, data in row if data]
        buttons = [d for d in datas if d.startswith("a:")]
        if buttons:
            # Buttons are in scale order; the simulated participant rates 1..n and taps it.
            value = seeker.rate(item.text, 1, len(buttons), experience)
            await p.tap(data=buttons[value - 1], message_id=item.message_id)
        else:
            comment = seeker.comment(experience)
            if comment:
                await p.send_text(comment)
            else:
                skip = next(d for d in datas if d.startswith("s:"))
                await p.tap(data=skip, message_id=item.message_id)
        answers += 1
