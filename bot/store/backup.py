"""A consistent copy of a live study database, safe to take from cron while the bot writes.

SQLite's online backup API copies the pages as they stood at one instant: in WAL mode the
copy holds a read snapshot and never blocks the bot's writer (copying the file with ``cp``
could catch a half-written page, or miss what still sits in the write-ahead log). The copy
is written to a hidden file beside the target, switched to a plain rollback journal (one
self-contained file to move elsewhere), erased of everyone in the erasure ledger still in it
(``bot.store.backup_erasure``), checked with ``PRAGMA integrity_check``, flushed to
disk and only then renamed over the target: a job killed half-way, a full disk or a damaged
source leaves the previous backup as it was.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from bot.core.errors import StoreError
from bot.store.backup_erasure import erase_in_copy

_BESIDE = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database while it is open."""


def take_backup(source: sqlite3.Connection, live: str | Path, target: str | Path) -> None:
    """Copy the database ``source`` (opened on ``live``) to ``target``, replacing it whole."""
    _refuse_live(Path(live), Path(target))
    write_backup(target, source.backup)


def write_backup(target: str | Path, fill: Callable[[sqlite3.Connection], None]) -> None:
    """A new SQLite file that ``fill`` writes the study into (through the empty file's
    connection), checked and then put in the place of ``target``, replacing it whole."""
    target = Path(target)
    _refuse_open(target)
    try:
        descriptor, name = tempfile.mkstemp(  # readable by its owner only, like a secret
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent
        )
    except OSError as error:
        raise StoreError(f"cannot write the backup {target}: {_reason(error)}") from error
    os.close(descriptor)
    partial = Path(name)
    try:
        _copy(fill, partial, target)
        _flush(partial)
        os.replace(partial, target)
        _flush(target.parent, folder=True)
    except OSError as error:
        raise StoreError(f"cannot write the backup {target}: {_reason(error)}") from error
    finally:
        partial.unlink(missing_ok=True)


def _refuse_live(live: Path, target: Path) -> None:
    """The live database, or a file SQLite keeps beside it, is never a backup's target."""
    guarded = [live, *(live.with_name(live.name + suffix) for suffix in _BESIDE)]
    resolved = target.resolve()
    for path in guarded:
        same = resolved == path.resolve()
        if not same and target.exists() and path.exists():
            same = os.path.samefile(target, path)  # a hard link, or another name for it
        if same:
            raise StoreError(
                f"refusing to write the backup over the live database ({path}): give --out"
                " another file"
            )


def _refuse_open(target: Path) -> None:
    """A write-ahead log or a hot journal beside ``target`` belongs to the file there now:
    SQLite would replay it into the new copy and damage it."""
    if target.is_dir():
        raise StoreError(f"cannot write the backup {target}: it is a folder; give a file name")
    if not target.parent.is_dir():
        raise StoreError(f"cannot write the backup {target}: there is no folder {target.parent}")
    for suffix in ("-wal", "-journal"):
        beside = target.with_name(target.name + suffix)
        if beside.exists():
            raise StoreError(
                f"cannot write the backup {target}: {beside} is beside it (the file there is"
                " open, or was not closed cleanly); close it or give --out another file"
            )


def _copy(fill: Callable[[sqlite3.Connection], None], partial: Path, target: Path) -> None:
    try:
        copy = sqlite3.connect(partial, isolation_level=None)
    except sqlite3.Error as error:
        raise StoreError(f"cannot write the backup {target}: {error}") from error
    try:
        fill(copy)  # SQLite: every page in one step, one snapshot; the bot keeps writing
        copy.execute("PRAGMA journal_mode=DELETE")
        erase_in_copy(copy)
        found = [str(row[0]) for row in copy.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.Error as error:
        raise StoreError(f"cannot write the backup {target}: {error}") from error
    finally:
        copy.close()
    if found != ["ok"]:
        raise StoreError(
            f"the copy failed SQLite's integrity check ({'; '.join(found[:3])}): the database"
            f" itself may be damaged; {target} was left as it was"
        )


def _flush(path: Path, *, folder: bool = False) -> None:
    """The copy on disk before the rename, and the rename itself (its folder's entry)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    except OSError:
        if not folder:  # some file systems cannot sync a folder; a file must be synced
            raise
    finally:
        os.close(descriptor)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
