"""The one store interface: everything the bot, the console, analytics and importers ask of
the study database, named in the researcher's words. SQL lives only behind it (the SQLite
backend and its migrations); a PostgreSQL backend implements the same methods and passes
the same contract suite (tests/store_contract/).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from bot.store.model import Command, StepCommit, StoredParticipant
from bot.vocabulary import Gate, GateScope

if TYPE_CHECKING:
    from bot.engine.effects import Record


class StudyStore(Protocol):
    # --- the bot: the hot path ------------------------------------------------------

    async def record_definition(self, study_id: str, definition: str) -> bool:
        """Keep the study as it ran; True when this definition is new."""
        ...

    async def remember_updates(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Store sealed updates before Telegram forgets them; the ids that were new."""
        ...

    async def pending_updates(self) -> list[tuple[int, str]]:
        """Updates stored but not yet handled (after a crash), in order."""
        ...

    async def load_participants(self, study_id: str) -> list[StoredParticipant]: ...

    async def commit_step(self, commit: StepCommit) -> None:
        """The step's state, rows and consumed update, durable when this returns."""
        ...

    def delivered(self, participant_id: str) -> None:
        """The messages of the last step went out (not awaited: at least once)."""
        ...

    async def pending_commands(self, after: int) -> list[Command]:
        """Commands with an id above ``after`` not applied yet, in order."""
        ...

    async def gates(self) -> dict[GateScope, Gate]: ...

    async def settle(self, records: Sequence[Record]) -> None:
        """Rows that belong to no participant (a command's outcome, a study's gate)."""
        ...

    async def close(self) -> None: ...
