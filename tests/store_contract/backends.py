"""The backends the contract suite runs against, each a way to name a study's URL:
``bot.store.open_store`` does the rest, so that a subprocess (the kill test) opens the same
one from its URL. A PostgreSQL backend adds one line to ``BACKENDS``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.store import Access, StudyStore, open_store


def sqlite_url(place: Path) -> str:
    """A SQLite file at ``place`` (absolute: ``sqlite:////tmp/…``)."""
    return f"sqlite:///{place.resolve()}"


def postgresql_url(place: Path, request: pytest.FixtureRequest) -> str:
    """A study of its own on the tests' PostgreSQL server, made as the bot makes one, alone
    on a database of its own (the ``postgres_study`` fixture)."""
    return str(request.getfixturevalue("postgres_study"))


BACKENDS: dict[str, Callable[[Path, pytest.FixtureRequest], str]] = {
    "sqlite": lambda place, _: sqlite_url(place),
    "postgresql": postgresql_url,
}
"""Each backend's URL of a study of the test's own: a SQLite file at a place in the test's
folder (not made yet); a server's study, made (opening either is the same to the bot: it
makes or upgrades the study first)."""


def url_of(backend: str, place: Path, request: pytest.FixtureRequest) -> str:
    return BACKENDS[backend](place, request)


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
