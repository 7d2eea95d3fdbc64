"""What a simulation reads about its own participant from the store: the system of the
current session (to answer by that system's profile), whether the task is still on, the
systems met in order (a preference item) and the sides of a side-by-side session (a vote)."""

from __future__ import annotations

from bot.core.vocabulary import EventKind, SessionState
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

    async def met(self) -> tuple[str, ...]:
        """The distinct systems of the participant's sessions, in the order met."""
        mine = [s for s in await self.store.sessions() if s.participant_id == self.participant_id]
        ordered = sorted(mine, key=lambda s: s.started_at)
        return tuple(dict.fromkeys(s.system_id for s in ordered))

    async def sides(self) -> tuple[str, str] | None:
        """Side by side: the current session's systems shown as A and B."""
        current = await self._current()
        found = await self.store.transcript(current.session_id) if current is not None else None
        drawn = [e for e in (found.events if found else ()) if e.kind is EventKind.SIDES_DRAWN]
        if not drawn:
            return None
        return str(drawn[-1].data["a"]), str(drawn[-1].data["b"])
