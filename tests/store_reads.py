"""What tests read back from a study database, through the store (never through SQL):
the snapshot analytics gets, as plain rows keyed by column name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.store.blocking import run_blocking
from bot.store.model import SNAPSHOT_COLUMNS, StoredParticipant
from bot.store.sqlite import open_existing, open_store


async def read_tables(db: Path | str) -> dict[str, list[dict[str, Any]]]:
    """Every snapshot table as a list of rows (dicts by column), in the store's order."""
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in SNAPSHOT_COLUMNS}

    def sink(table: str, rows: Any) -> None:
        columns = SNAPSHOT_COLUMNS[table]
        found[table] += [dict(zip(columns, row, strict=True)) for row in rows]

    store = await open_existing(db, read_only=True)
    try:
        await store.read_snapshot(sink)
    finally:
        await store.close()
    return found


def tables(db: Path | str) -> dict[str, list[dict[str, Any]]]:
    """:func:`read_tables` for tests without an event loop."""
    return run_blocking(lambda: read_tables(db))


def count(db: Path | str, table: str) -> int:
    return len(tables(db)[table])


def resumed(db: Path | str, study_id: str) -> list[StoredParticipant]:
    """The participants a bot restarting on ``db`` would load."""

    async def load() -> list[StoredParticipant]:
        store = await open_store(db)
        try:
            return await store.load_participants(study_id)
        finally:
            await store.close()

    return run_blocking(load)
