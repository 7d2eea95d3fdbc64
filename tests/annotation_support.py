"""Stored conversations for annotation tests: sessions written through the store the way
the bot commits them (a real SQLite file), with the study's definition beside them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Consent, SessionState, Stage
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.interface import StudyStore
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.loading import load_study

T = TypeVar("T")


async def store_conversations(
    store: StudyStore, study: str, scenario: str, sessions: Sequence[tuple[str, str, int]]
) -> None:
    """(session id, system, answered turns) each, ended, by the participant the id names."""
    for sid, system, turns in sessions:
        person = sid.rsplit("-", 1)[0]
        records: list[fx.Record] = [
            fx.RecordConsent(Consent.ACCEPTED),
            fx.OpenSession(sid, scenario, system, 0, "random", "1"),
        ]
        for turn in range(1, turns + 1):
            records += [
                fx.RecordUserTurn(sid, turn, f"hello {turn}"),
                fx.RecordSystemTurn(sid, turn, f"I found Moss Hollow, reply {turn}", 3.0),
            ]
        records.append(fx.SetSessionState(sid, SessionState.ENDED))
        status = ParticipantStatus(Stage.FINISHED, 1.0)
        await store.commit_step(StepCommit(study, person, "{}", status, None, records))


async def store_study(
    store: StudyStore, study: str, scenario: str, sessions: Sequence[tuple[str, str, int]]
) -> None:
    """The shipped study's definition and the sessions, through an open store."""
    await store.record_definition(study, definition_json(load_study(study)))
    await store_conversations(store, study, scenario, sessions)


def stored_study(
    db: Path,
    study: str,
    scenario: str,
    sessions: Sequence[tuple[str, str, int]],
    *,
    definition: bool = True,
) -> Path:
    """``db`` with the sessions (and the shipped study's definition, unless told not to)."""

    async def write() -> None:
        store = await open_store(db, lambda: 100.0)
        try:
            if definition:
                await store.record_definition(study, definition_json(load_study(study)))
            await store_conversations(store, study, scenario, sessions)
        finally:
            await store.close()

    asyncio.run(write())
    return db


def read(db: Path, query: Callable[[StudyStore], Awaitable[T]]) -> T:
    async def run() -> T:
        store = await open_store(db)
        try:
            return await query(store)
        finally:
            await store.close()

    return asyncio.run(run())
