"""The store's former API, kept only while the runner and a few tests move to
:mod:`bot.store.sqlite` (``open_store``, ``commit_step(StepCommit)``, ``settle``,
``pending_commands -> list[Command]``, ``gates -> dict[GateScope, Gate]``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.engine import effects as fx
from bot.store.model import StepCommit, StoredParticipant
from bot.store.sqlite import SqliteStore, open_store

__all__ = ["Store", "StoredParticipant"]


class Store:
    """The former ``Store``, delegating to the SQLite backend."""

    def __init__(self, backend: SqliteStore) -> None:
        self.backend = backend

    @classmethod
    async def open(
        cls,
        path: str | Path,
        clock: Callable[[], float] = time.time,
        *,
        synchronous: str = "NORMAL",
    ) -> Store:
        return cls(await open_store(path, clock, synchronous=synchronous))

    async def close(self) -> None:
        await self.backend.close()

    async def record_definition(self, study_id: str, definition: str) -> bool:
        return await self.backend.record_definition(study_id, definition)

    async def remember_updates(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        return await self.backend.remember_updates(updates)

    async def pending_updates(self) -> list[tuple[int, str]]:
        return await self.backend.pending_updates()

    async def load_participants(self, study_id: str) -> list[StoredParticipant]:
        return await self.backend.load_participants(study_id)

    def delivered(self, participant_id: str) -> None:
        self.backend.delivered(participant_id)

    async def commit_step(
        self,
        *,
        study_id: str,
        participant_id: str,
        state: str | None,
        chat_key: str | None,
        records: Sequence[fx.Record],
        update_id: int | None,
        undelivered: str | None = None,
    ) -> None:
        await self.backend.commit_step(
            StepCommit(
                study_id, participant_id, state, None, chat_key, records, update_id, undelivered
            )
        )

    async def pending_commands(self, after: int) -> list[tuple[int, str, str, str | None, str]]:
        return [
            (c.id, c.kind.value, c.wizard, c.session_id, json.dumps(dict(c.payload)))
            for c in await self.backend.pending_commands(after)
        ]

    async def gates(self) -> dict[str, tuple[bool, float | None]]:
        return {
            str(scope): (gate.gated, gate.auto_send_after)
            for scope, gate in (await self.backend.gates()).items()
        }

    async def settle_command(self, records: Sequence[fx.Record]) -> None:
        await self.backend.settle(records)
