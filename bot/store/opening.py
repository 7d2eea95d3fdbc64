"""One way in to a study database, whatever keeps it: ``open_store(url)`` reads the URL's
scheme and hands the rest to that backend. A plain path or ``sqlite:///relative/path``
(``sqlite:////absolute/path``) is a SQLite file; ``postgresql://`` (or ``postgres://``) is a
database on a PostgreSQL server, where each study is a schema of its own: the study is the
one given (``study=``, or ``?study=`` in the URL, which libpq never sees), else the only
one the database keeps. A refused URL is said in one line without its password.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bot.core.errors import StoreError, without_passwords
from bot.store.interface import StudyStore

__all__ = ["Access", "Database", "Location", "locate", "open_store", "shown_url", "studies_at"]

Database = str | os.PathLike[str]
"""What ``--db`` names: a SQLite file (a path, or ``sqlite:///``) or a ``postgresql://`` URL."""

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


@dataclass(frozen=True)
class Location:
    """Where a study is: a SQLite file (``server`` is None), or a study of a server's
    database (``server`` the URL libpq reads, without ozlab's ``study=``)."""

    path: str
    server: str | None = None
    study: str | None = None

    def study_or(self, default: str) -> str:
        """The study the URL names, else ``default`` (the study a bot runs: its schema on a
        server; a SQLite file ignores it)."""
        return self.study or default

    @property
    def shown(self) -> str:
        """As a line for the researcher names it (a file by its absolute path)."""
        if self.server is None:
            return str(Path(self.path).resolve())
        return shown_url(self.server) + (f" (study {self.study})" if self.study else "")


def locate(url: Database, study: str | None = None) -> Location:
    """The place a ``--db`` names, without opening anything; ``study`` is the one the
    command names (a URL naming another is refused)."""
    text = os.fspath(url)
    found = _SCHEME.match(text)
    if found is not None and found.group(1).lower() in _POSTGRES:
        if not isinstance(url, str):
            raise StoreError(f"{shown_url(text)} was read as a path: give the URL as text")
        server, named = _without_study(text)
        if study is not None and named is not None and study != named:
            raise StoreError(f"the URL names study {named!r} and --study {study!r}: give one")
        return Location(text, server, study or named)
    return Location(_sqlite_path(url))


_POSTGRES = ("postgresql", "postgres")


def _without_study(url: str) -> tuple[str, str | None]:
    """The URL without ozlab's own ``study=`` query parameter, and the study it named."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    named = [value for key, value in query if key == "study"]
    kept = urlencode([(key, value) for key, value in query if key != "study"])
    return urlunsplit(parts._replace(query=kept)), (named[-1] if named else None)


async def open_store(
    url: str | os.PathLike[str],
    clock: Callable[[], float] = time.time,
    *,
    access: Access = Access.RUN,
    study: str | None = None,
    **settings: str,
) -> StudyStore:
    """The study database at ``url``, opened by the backend its scheme names. ``settings``
    are the backend's own (SQLite: ``synchronous``); a backend refuses one it does not know.
    ``study`` picks the study of a server's database (a SQLite file is one study's)."""
    place = locate(url, study)
    if place.server is not None:
        return await _open_postgres(place, clock, access, settings)
    path = place.path
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


async def studies_at(url: Database, study: str | None = None) -> list[str | None]:
    """The studies ``url`` keeps, each as ``open_store``'s ``study`` opens it: a SQLite file
    is one (None); a server's database every study it keeps, or the one the URL or
    ``study`` names."""
    place = locate(url, study)
    if place.server is None:
        return [None]
    if place.study is not None:
        return [place.study]
    try:
        from bot.store.postgres import store as postgres
    except ImportError:
        raise StoreError("PostgreSQL needs psycopg: pip install 'ozlab[postgresql]'") from None
    found = await asyncio.to_thread(postgres.studies, place.server)
    if not found:
        raise StoreError(f"no study in {shown_url(place.server)}: give the --db the bot ran with")
    return list(found)


async def _open_postgres(
    place: Location, clock: Callable[[], float], access: Access, settings: dict[str, str]
) -> StudyStore:
    try:
        from bot.store.postgres import store as postgres
    except ImportError:
        raise StoreError("PostgreSQL needs psycopg: pip install 'ozlab[postgresql]'") from None
    if settings:
        raise StoreError(f"a PostgreSQL study has no setting {sorted(settings)[0]!r}")
    assert place.server is not None
    study = place.study
    if study is None:
        study = await asyncio.to_thread(
            postgres.only_study, place.server, creating=access is Access.RUN
        )
    if access is Access.READ:
        return await postgres.open_existing(place.server, study, clock, read_only=True)
    if access is Access.ATTACH:
        return await postgres.open_existing(place.server, study, clock)
    return await postgres.open_store(place.server, study, clock, create=access is Access.RUN)


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
            " (a path or sqlite:///path) or a postgresql:// URL"
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
