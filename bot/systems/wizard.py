"""The system of type ``wizard``: nothing behind it but the experimenters at the console."""

from __future__ import annotations

from bot.systems.base import Conversation, SystemReply


class WizardOnly:
    """Answers nothing by itself: the runner holds every turn for a wizard's reply."""

    needs_wizard = True

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply(texts=())

    async def close(self) -> None:
        """Nothing to release."""
