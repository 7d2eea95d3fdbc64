"""Which flow a delivery belongs to: an annotator's chat goes to the annotators' flow, every
other chat to the participants'. Both run behind the one driver (``bot.runtime.driver``);
neither knows the other exists."""

from __future__ import annotations

from bot.engine.delivery import Delivery
from bot.runtime.annotators import AnnotationRunner
from bot.runtime.participants import StudyRunner


class Dispatcher:
    """The one handler the Telegram layer calls, once per delivery, in order per chat."""

    def __init__(self, participants: StudyRunner, annotators: AnnotationRunner) -> None:
        self.participants = participants
        self.annotators = annotators

    async def handle(self, delivery: Delivery) -> None:
        """Is this chat an annotator's? Then theirs (a participant's chat cannot claim an
        annotator's code); else the participant's."""
        participant = self.participants.knows(delivery.chat_id)
        if await self.annotators.takes(delivery, participant):
            return
        await self.participants.handle(delivery)
