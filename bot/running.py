"""Whether a bot runs on a study database, told by an advisory lock on the file itself.

``ozlab run`` holds a shared ``flock`` on the database file while it runs; the kernel drops
it when the process ends, however it ends, so a crashed bot never leaves a stale marker.
``ozlab erase`` takes the exclusive lock without waiting: when it gets it, no bot runs and
none can start until the erasure is done (a starting bot waits for it); when it does not,
the bot runs and holds participants in memory, so the erasure goes to the bot as a command
it applies. (BSD ``flock`` locks are separate from the POSIX locks SQLite takes.)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from bot.errors import StoreError


def hold(db: str | Path) -> int:
    """Taken by ``ozlab run`` for as long as it runs (waits while an erasure holds the
    file); closing the returned descriptor lets go."""
    try:
        fd = os.open(db, os.O_RDONLY | os.O_CREAT, 0o600)
    except OSError as error:
        raise StoreError(f"cannot open the study database {db}: {error.strerror}") from error
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def alone_on(db: str | Path) -> Iterator[bool]:
    """True (and the file held) when no bot runs on ``db``; False when one does."""
    fd = os.open(db, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)
