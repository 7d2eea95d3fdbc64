"""One way in to a study database, whatever keeps it: ``open_store(url)`` reads the URL's
scheme and hands the rest to that backend. A plain path or ``sqlite:///relative/path``
(``sqlite:////absolute/path``) is a SQLite file; the next backend adds its scheme here and
nowhere else. A refused URL is said in one line without its password.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable
from enum import Enum

from bot.core.errors import StoreError, without_passwords
from bot.store.interface import StudyStore

__all__ = ["Access", "open_store", "shown_url"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")
"""A URL's scheme, then a slash (one is left when a path object folded them): two
characters at least, so that a drive letter (``C:/``) or a file named ``study:v2`` stays a
path."""


class Access(Enum):
    """How a command may use the study it opens."""

    RUN = "run"
    """Created or brought up to this ozlab's schema (the bot, importers, invitations)."""
    UPGRADE = "upgrade"
    """Brought up to this ozlab's schema, never created: a missing study is a wrong --db."""
    ATTACH = "attach"
    """Written beside a running bot (the console's commands): already at this schema."""
    READ = "read"
    """Read only (analytics, backups, payments): any older schema, nothing written."""


async def open_store(
    url: str | os.PathLike[str],
    clock: Callable[[], float] = time.time,
    *,
    access: Access = Access.RUN,
    **settings: str,
) -> StudyStore:
    """The study database at ``url``, opened by the backend its scheme names. ``settings``
    are the backend's own (SQLite: ``synchronous``); a backend refuses one it does not know."""
    path = _sqlite_path(url)
    from bot.store import sqlite  # a backend is loaded only when its scheme is asked for

    unknown = sorted(set(settings) - {"synchronous"})
    if unknown:
        raise StoreError(f"a SQLite study database has no setting {unknown[0]!r}")
    if access is Access.READ:
        return await sqlite.open_existing(path, clock, read_only=True)
    if access is Access.ATTACH:
        return await sqlite.open_existing(path, clock)
    if access is Access.UPGRADE and not await asyncio.to_thread(sqlite.is_study_database, path):
        raise StoreError(f"no study database at {path}: give the --db the bot ran with")
    return await sqlite.open_store(path, clock, **settings)


def _sqlite_path(url: str | os.PathLike[str]) -> str:
    """The SQLite file a URL names, or the one line that says why it names none."""
    text = os.fspath(url)
    found = _SCHEME.match(text)
    if found is None:
        return text
    scheme = found.group(1).lower()
    if scheme != "sqlite":
        raise StoreError(
            f"no store backend for {scheme!r} URLs ({shown_url(text)}): give a SQLite file"
            " as a path or sqlite:///path"
        )
    if not isinstance(url, str):
        # a path object has folded the URL's slashes: sqlite:///a and sqlite:////a look alike
        raise StoreError(f"{shown_url(text)} was read as a path: give the SQLite file's path")
    rest = text[found.end(1) + 1 :]  # after the colon
    if not rest.startswith("///") or len(rest) == 3:
        raise StoreError(
            f"{shown_url(text)} names no file: write sqlite:///relative/path"
            " or sqlite:////absolute/path"
        )
    return rest[3:]


def shown_url(url: str) -> str:
    """The URL as it may be printed: a password in it becomes ``***``."""
    return without_passwords(url)
