"""What tests read back from a study database, through the store (never through SQL).

The snapshot analytics gets comes back as plain rows keyed by column name, each table in the
store's order (sessions by start, exchanges by session and turn, answers and events as
stored); what the snapshot leaves out comes from the read that has it: a transcript (who
edited a reply, and what the system had said), what a restarting bot would load (the sealed
chat id, the messages not yet delivered), the updates still to handle.

Every read opens the file read-only and closes it again: a running bot is never held up and
nothing is cached between two reads. :class:`StoredStudy` gives a test's bot the same reads.
What the store deliberately does not expose is in ``tests/storage_probe.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from bot.core.annotation import TranscriptExchange
from bot.store import Access, StudyStore, open_store
from bot.store.blocking import run_blocking
from bot.store.model import SNAPSHOT_COLUMNS, StoredParticipant, Transcript
from tests.store_contract.records import rows_of

T = TypeVar("T")
Row = dict[str, Any]


def reading(db: Path | str, read: Callable[[StudyStore], Awaitable[T]]) -> T:
    """``read`` on a read-only store of ``db``, from a test with or without an event loop."""

    async def work() -> T:
        async with await open_store(db, access=Access.READ) as store:
            return await read(store)

    return run_blocking(work)


async def read_tables(db: Path | str) -> dict[str, list[Row]]:
    """Every snapshot table as a list of rows (dicts by column), in the store's order."""
    found: dict[str, list[Row]] = {table: [] for table in SNAPSHOT_COLUMNS}

    def sink(table: str, arrow: Any) -> None:
        columns = SNAPSHOT_COLUMNS[table]
        found[table] += [dict(zip(columns, row, strict=True)) for row in rows_of(arrow)]

    async with await open_store(db, access=Access.READ) as store:
        await store.read_snapshot(sink)
    return found


def tables(db: Path | str) -> dict[str, list[Row]]:
    """:func:`read_tables` for tests without an event loop."""
    return run_blocking(lambda: read_tables(db))


def count(db: Path | str, table: str) -> int:
    return len(tables(db)[table])


def resumed(db: Path | str, study_id: str) -> list[StoredParticipant]:
    """The participants a bot restarting on ``db`` would load."""
    return reading(db, lambda store: store.load_participants(study_id))


def pick(rows: Iterable[Mapping[str, Any]], *columns: str) -> list[tuple[Any, ...]]:
    """The named columns of each row as a tuple: rows to compare with a list of tuples."""
    return [tuple(row[column] for column in columns) for row in rows]


class StoredStudy:
    """The reads of a study database a test asserts with; ``db`` is the file (or a URL)."""

    db: Path | str

    def tables(self) -> dict[str, list[Row]]:
        return tables(self.db)

    def sessions(self) -> list[Row]:
        """Every session, in the order they started."""
        return self.tables()["sessions"]

    def exchanges(self) -> list[Row]:
        """Every exchange, by session and turn."""
        return self.tables()["exchanges"]

    def responses(self) -> list[Row]:
        """Every answer, in the order they were stored."""
        return self.tables()["responses"]

    def events(self, kind: str | None = None) -> list[Row]:
        """Every event (of ``kind`` only, if given), in the order they were stored."""
        return [e for e in self.tables()["events"] if kind is None or e["kind"] == kind]

    def participants(self) -> list[Row]:
        """Everyone, in the order they arrived."""
        return self.tables()["participants"]

    def transcripts(self) -> list[Transcript]:
        """Each session's transcript, in the order the sessions started."""

        async def read(store: StudyStore) -> list[Transcript]:
            found = [await store.transcript(s.session_id) for s in await store.sessions()]
            return [t for t in found if t is not None]

        return reading(self.db, read)

    def transcript_exchanges(self) -> list[TranscriptExchange]:
        """Every exchange with who wrote its reply (wizard, original text), by session and turn."""
        return [x for t in self.transcripts() for x in t.exchanges]

    def resumed(self, study_id: str) -> list[StoredParticipant]:
        """The participants a bot restarting on this file would load."""
        return resumed(self.db, study_id)

    def pending_updates(self) -> list[tuple[int, str]]:
        """Updates stored but not handled yet: what a restarting bot would handle first."""
        return reading(self.db, lambda store: store.pending_updates())
