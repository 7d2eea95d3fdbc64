"""One study database, one writer: who writes to a study file and who has it open, told by
the kernel's locks.

Two questions are asked of a study database, and one ``flock`` cannot answer both: a lock
either shared or exclusive says "someone holds it", never "a writer holds it" beside
"readers hold it". So there are two locks, both BSD ``flock``, which the kernel drops when
the process ends however it ends (``kill -9`` too): nothing stale remains to clean up.

- **The writer's lock**: on ``<db>-lock``, a small file beside the database that ozlab
  creates (0600) and never deletes. ``ozlab run``, ``demo``, ``pilot`` and ``chat`` take it
  exclusively without waiting (:func:`claim`) and refuse to start, in one line, when another
  writer has it: two bots on one file would each hold its participants in memory. The
  holder writes who it is into the file for that line (a hint only; the lock is the truth).
  ``ozlab erase`` takes it *shared* without waiting (:func:`alone_on`): getting it, no
  writer runs, so it erases here, and none starts meanwhile; not getting it, a bot runs
  and the erasure is handed to it as a command. Shared, so that a starting writer can tell
  an erasure (the file can be had shared: it waits a moment) from a writer (it cannot: it
  refuses), and two erasures do not keep each other out.
- **Presence**: shared, on the database file itself, taken by every process that opens the
  store (:func:`announce`, called by ``bot.store.sqlite``'s opening functions only, so the
  bot, the console, report, export, backup and imports all announce themselves in one
  place). It is on the database file so that a reader needs no write access to the folder.
  Only a demo or a pilot replacing an earlier simulation takes it exclusively
  (:func:`unused`), which it gets only when no ozlab process has the file open, and holds it
  for the moment of the check and the removal; a reader that meets it waits that moment out.

SQLite's own locks are POSIX (``fcntl``) locks on the same database file; on a local file
system (which WAL requires anyway) they and ``flock`` locks do not see each other. But POSIX
locks belong to the process, and closing *any* descriptor of the file drops all of them: a
descriptor ozlab opened on the database file is therefore never closed while a SQLite
connection of the same process is open on it. One presence descriptor per file per process
is kept and counted, and closed when the last store on that file has closed its connections.
The writer's lock file is never opened by SQLite.

Not chosen: byte ranges of one lock file. POSIX byte-range locks belong to the process (a
process never conflicts with itself, and the tests run several bots in one), and the
per-descriptor kind (``F_OFD_SETLK``) exists only on Linux.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from bot.core.errors import StoreError

LOCK_SUFFIX = "-lock"
"""The writer's lock file is the database's name with this after it (``study.sqlite-lock``)."""

_HOLDER_MAX = 200  # bytes of "who holds it" read back for the refusal
_ERASURE_POLL = 0.1  # seconds between two looks while an erasure holds the file


def lock_file(db: str | Path) -> Path:
    return Path(f"{db}{LOCK_SUFFIX}")


class Writer:
    """The writer's lock on one study database, held until :meth:`release`."""

    def __init__(self, db: Path, fd: int) -> None:
        self.db = db
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(db: str | Path, who: str) -> Writer:
    """The writer's lock for ``who`` (``ozlab run``...); refused at once, in one line, when
    another writer has it. An erasure done meanwhile (``ozlab erase``, a moment) is waited
    for: a bot that a supervisor restarts while cron erases must start, not give up."""
    path = lock_file(db)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise StoreError(
            f"cannot open the study database {db} (its lock file {path.name}: {error.strerror})"
        ) from error
    try:
        while not _locked(fd, fcntl.LOCK_EX):
            if not _locked(fd, fcntl.LOCK_SH):  # not an erasure: a writer
                raise StoreError(
                    f"{db} is taken by another writer ({_holder(fd)}): one study database,"
                    " one writer; stop it or choose another --db"
                )
            fcntl.flock(fd, fcntl.LOCK_UN)
            time.sleep(_ERASURE_POLL)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{who}, pid {os.getpid()}\n".encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return Writer(Path(db), fd)


def _locked(fd: int, kind: int) -> bool:
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """Who holds the writer's lock, as the holder wrote it (printable characters only)."""
    holder = os.pread(fd, _HOLDER_MAX, 0).decode(errors="replace").strip()
    return "".join(c for c in holder if c.isprintable()) or "another ozlab process"


@contextlib.contextmanager
def alone_on(db: str | Path) -> Iterator[bool]:
    """True when no writer runs on ``db``, with the writer's lock held shared meanwhile, so
    that none starts (a starting one waits); False when a writer runs."""
    path = lock_file(db)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise StoreError(
            f"cannot open the study database {db} (its lock file {path.name}: {error.strerror})"
        ) from error
    try:
        yield _locked(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


# --- presence ---------------------------------------------------------------------------

_guard = threading.Lock()
_present: dict[tuple[int, int], list[int]] = {}
"""(device, inode) → [descriptor with the shared lock, stores of this process using it]."""


def _identity(path: str | Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


class Presence:
    """This process's announcement that it has a study database open; :meth:`release` it
    only once the store's connections are closed."""

    def __init__(self, identity: tuple[int, int]) -> None:
        self._identity: tuple[int, int] | None = identity

    def release(self) -> None:
        with _guard:
            if self._identity is None:
                return
            held = _present[self._identity]
            held[1] -= 1
            if held[1] == 0:
                del _present[self._identity]
                os.close(held[0])
            self._identity = None


def announce(db: str | Path, *, create: bool = False) -> Presence:
    """Say that this process has ``db`` open (``create``: make the file, 0600, if missing);
    waits out a simulation's replacement of the file, which takes a moment."""
    flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    with _guard:
        while True:
            identity = _identity(db)
            if identity is not None and identity in _present:
                _present[identity][1] += 1
                return Presence(identity)
            try:
                fd = os.open(db, flags, 0o600)
            except OSError as error:
                raise StoreError(
                    f"cannot open the study database {db}: {error.strerror}"
                ) from error
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                found = os.fstat(fd)
                identity = (found.st_dev, found.st_ino)
                if _identity(db) == identity:
                    _present[identity] = [fd, 1]
                    return Presence(identity)
            except BaseException:
                os.close(fd)
                raise
            # The file was replaced while this waited: hold the one that is there now.
            os.close(fd)
            if not create and _identity(db) is None:
                raise StoreError(f"no study database at {db}: it was removed meanwhile")


@contextlib.contextmanager
def unused(db: str | Path) -> Iterator[bool]:
    """True, with the file held so that no ozlab process opens it meanwhile, when none has
    ``db`` open (this one included); False when one has."""
    with _guard:
        if _identity(db) in _present:
            fd = None
        else:
            try:
                fd = os.open(db, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as error:
                raise StoreError(f"cannot open {db}: {error.strerror}") from error
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                fd = None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)
