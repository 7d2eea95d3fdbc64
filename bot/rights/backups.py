"""Erasures reach backups: every backup in a folder is erased of everyone the live study's
ledger names (``ozlab erase --backups DIR``), by the store's own erasure, so a backup keeps a
withdrawn participant only until this runs on it. Every file of the folder gets a line: what
was erased, or why it was left alone. A backup that cannot be erased as it is (open, from a
newer ozlab, not a study) stops the command before any file is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.core.errors import StoreError
from bot.store.backup_erasure import check_backup, erase_in_backup, is_database
from bot.store.model import BackupErased, ErasureRecord

_BESIDE = ("-wal", "-shm", "-journal")


def erase_backups(
    folder: Path,
    ledger: Sequence[ErasureRecord],
    owner: Callable[[str], str | None] | None,
    live: Path | None,
) -> list[str]:
    """One line per file in ``folder`` (the live database ``live`` itself is skipped; None:
    the study is on a server, and every SQLite file in the folder is a backup)."""
    databases, others = _files(folder, live)
    for path in databases:
        check_backup(path)
    lines = [
        f"left alone: {path} is not an SQLite file (a compressed or encrypted backup is"
        " erased only once unpacked: run this again on it then)"
        for path in others
    ]
    for path in databases:
        lines.append(_told(path, erase_in_backup(path, ledger, owner)))
    if not databases and not others:
        lines.append(f"no backups in {folder}")
    return lines


def _files(folder: Path, live: Path | None) -> tuple[list[Path], list[Path]]:
    """The folder's backups, and its other files; never the live database or the files
    SQLite keeps beside a database, nor hidden ones (a backup half-written by ``ozlab
    backup`` is hidden until it is complete, and erased then by that command itself)."""
    try:
        found = sorted(path for path in folder.iterdir() if path.is_file())
    except OSError as error:
        raise StoreError(f"cannot read the folder {folder}: {error.strerror}") from error
    names = {path.name for path in found}
    databases: list[Path] = []
    others: list[Path] = []
    for path in found:
        beside = next((s for s in _BESIDE if path.name.endswith(s)), None)
        if path.name.startswith(".") or _same(path, live):
            continue
        if beside is not None and path.name[: -len(beside)] in names:
            continue
        (databases if is_database(path) else others).append(path)
    return databases, others


def _same(path: Path, live: Path | None) -> bool:
    if live is None:
        return False
    guarded = [live, *(live.with_name(live.name + suffix) for suffix in _BESIDE)]
    return any(other.exists() and os.path.samefile(path, other) for other in guarded)


def _told(path: Path, done: BackupErased) -> str:
    upgraded = (
        f"; brought up from schema version {done.migrated_from}"
        if done.migrated_from is not None
        else ""
    )
    if done.participants:
        people = "participant" if done.participants == 1 else "participants"
        return f"{path}: erased {done.participants} withdrawn {people}{upgraded}"
    return f"{path}: nobody to erase{upgraded}"
