"""What a simulation reads about its own participant from the store: the system of the
current session (to answer by that system's profile) and whether the task is still on."""

from __future__ import annotations

from bot.core.vocabulary import SessionState
from bot.store.interface import ConsoleReadModel
from bot.store.model import SessionRecord


class StoreLookout:
    """One simulated participant's sessions, read through the bot's own store."""

    def __init__(self, store: ConsoleReadModel, participant_id: str) -> None:
        self.store = store
        self.participant_id = participant_id

    async def _current(self) -> SessionRecord | None:
        mine = [s for s in await self.store.sessions() if s.participant_id == self.participant_id]
        return max(mine, key=lambda s: s.started_at) if mine else None

    async def system(self) -> str | None:
        current = await self._current()
        return current.system_id if current is not None else None

    async def in_task(self) -> bool:
        current = await self._current()
        return current is not None and current.state is SessionState.DIALOGUE
