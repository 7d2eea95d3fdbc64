"""What an erasure cannot reach: the files ozlab wrote with participants' data (an export's
tables, a report and the tables and figures beside it, ``--figures``, a payments CSV) are
the researcher's, outside the study database, and an erasure leaves them as they are. So the
study database keeps a register of them (path, kind, when last written; never what they
hold), and ``ozlab erase`` names those written before the erasure that still exist on this
machine, for the researcher to delete or write again. Backups are not in it: the erasure
ledger reaches them (``ozlab erase --backups``), and an import consults the ledger.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.core.errors import StoreError
from bot.core.vocabulary import WrittenKind
from bot.store import Access, open_store
from bot.store.blocking import run_blocking
from bot.store.interface import FileRegister
from bot.store.opening import Database


def register_written(
    db: Database, kind: WrittenKind, paths: Sequence[Path], *, study: str | None = None
) -> None:
    """``paths``, just written from ``db``, entered in its register as ``kind``. When the
    study cannot take them (a file of an older ozlab, one that cannot be written), one line
    says so on standard error: the files are written all the same."""
    if not paths:
        return

    async def enter() -> None:
        store = await open_store(db, access=Access.ATTACH, study=study)
        try:
            await store.register_files(kind, [str(path.resolve()) for path in paths])
        finally:
            await store.close()

    try:
        run_blocking(enter)
    except StoreError as error:
        print(
            f"ozlab: {len(paths)} files written, not entered in the study's register of files"
            f" written (an erasure will not name them): {error}",
            file=sys.stderr,
        )


async def beyond_reach(store: FileRegister, erased_at: float) -> list[str]:
    """One line per file of the register written before ``erased_at`` that still exists."""
    before = [f for f in await store.registered_files() if f.written_at < erased_at]
    there = await asyncio.to_thread(lambda: [Path(f.path).exists() for f in before])
    return [
        f"written before this erasure, beyond its reach (delete it or write it again):"
        f" {written.path} ({written.kind.value}, {_when(written.written_at)})"
        for written, exists in zip(before, there, strict=True)
        if exists
    ]


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
