"""Who may write a study, whatever keeps it: the writer's lock, an erasure's turn, and a
demo's check that nobody has the study open, for a SQLite file (``bot.store.lock``: ``flock``)
or a study on a PostgreSQL server (``bot.store.postgres.lock``: advisory locks). Commands
name the study's ``--db`` and never ask which it is."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Protocol

from bot.store import lock
from bot.store.opening import Location, locate

__all__ = ["WriterClaim", "alone_on", "claim"]


class WriterClaim(Protocol):
    """The writer's lock on one study, held until released."""

    def release(self) -> None: ...

    def held(self) -> bool:
        """Whether the lock is still held: one on a server goes with its connection (the
        server restarted, or dropped an idle session), a file's only when released."""
        ...

    def __enter__(self) -> WriterClaim: ...

    def __exit__(self, *exc: object) -> None: ...


def claim(db: str | os.PathLike[str], who: str, study: str | None = None) -> WriterClaim:
    """The writer's lock for ``who``; refused at once, in one line, when another writer has
    it (an erasure meanwhile is waited for)."""
    place = locate(db, study)
    if place.server is None:
        return lock.claim(place.path, who)
    from bot.store.postgres import lock as server_lock

    return server_lock.claim(place.server, _study(place), who)


@contextlib.contextmanager
def alone_on(db: str | os.PathLike[str], study: str | None = None) -> Iterator[bool]:
    """True when no writer runs on the study, none starting meanwhile; False when one runs."""
    place = locate(db, study)
    if place.server is None:
        with lock.alone_on(place.path) as alone:
            yield alone
        return
    from bot.store.postgres import lock as server_lock

    with server_lock.alone_on(place.server, _study(place)) as alone:
        yield alone


def _study(place: Location) -> str:
    """The study named, else the only one the database keeps."""
    if place.study is not None:
        return place.study
    assert place.server is not None
    from bot.store.postgres.store import only_study

    return only_study(place.server)
