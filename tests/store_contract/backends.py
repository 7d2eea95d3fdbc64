"""The backends the contract suite runs against, opened by name and location, so that a
subprocess (the kill test) opens the same one. A PostgreSQL backend adds a name here."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.store.interface import StudyStore
from bot.store.sqlite import open_existing, open_store

BACKENDS = ("sqlite",)


async def open_backend(
    name: str, location: str, clock: Callable[[], float] = time.time
) -> StudyStore:
    """The store the bot runs on (created or upgraded)."""
    if name == "sqlite":
        return await open_store(location, clock)
    raise LookupError(f"no store backend {name!r}")


async def attach_backend(name: str, location: str) -> StudyStore:
    """The store as a console opens it (never upgraded)."""
    if name == "sqlite":
        return await open_existing(location)
    raise LookupError(f"no store backend {name!r}")
