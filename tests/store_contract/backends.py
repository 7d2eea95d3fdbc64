"""The backends the contract suite runs against, each a study's URL (the ``location``
fixture): ``bot.store.open_store`` does the rest, so that a subprocess (the kill test) opens
the same one from its URL."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.store import Access, StudyStore, open_store


def sqlite_url(place: Path) -> str:
    """A SQLite file at ``place`` (absolute: ``sqlite:////tmp/…``)."""
    return f"sqlite:///{place.resolve()}"


BACKENDS = ("postgresql", "sqlite")
"""The backends every contract test runs on (the ``location`` fixture names a study on each)."""


async def open_backend(url: str, clock: Callable[[], float] = time.time) -> StudyStore:
    """The store the bot runs on (created or upgraded)."""
    return await open_store(url, clock)


async def attach_backend(url: str) -> StudyStore:
    """The store as a console opens it (never upgraded)."""
    return await open_store(url, access=Access.ATTACH)


def stored_bytes(backend: str, url: str, place: Path, server: Any = None) -> bytes:
    """Every byte the backend keeps a study in, as it is on disk now: a SQLite file with its
    WAL; a server's data files of the study's database (after a checkpoint has written out
    what sat in shared memory; the write-ahead log is a backup's matter, see docs)."""
    if backend == "sqlite":
        parts = [place, place.with_name(place.name + "-wal"), place.with_name(place.name + "-shm")]
        return b"".join(path.read_bytes() for path in parts if path.exists())
    return bytes(server.stored_bytes(url.split("?")[0]))
