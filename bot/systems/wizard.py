"""The system of type ``wizard``: nothing behind it but the experimenters at the console."""

from __future__ import annotations

from bot.core.conversation import Conversation, SystemReply


class WizardOnly:
    """Never called: the engine holds every turn of a ``wizard`` system for a wizard's reply
    (it reads the system's type from the study). It stands in the registry like any system."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply(texts=())

    async def close(self) -> None:
        """Nothing to release."""
