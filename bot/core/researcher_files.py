"""The files ozlab hands a researcher hold participants' data (their words, pseudonyms,
platform ids, live invitation codes): each is its owner's only, and no cell of a CSV is a
formula a spreadsheet would run.

**Modes.** Files are written 0600 and the folders ozlab makes for them 0700, as the study
database is, whatever the umask; a file written again over a readable one is tightened to
0600. A folder that exists already keeps its mode (it may be the researcher's home).

**CSV cells** (OWASP's rule against CSV injection): a text cell that begins with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a ``'`` before it, so Excel,
LibreOffice Calc and Google Sheets show it as text instead of evaluating it
(``=HYPERLINK(...)`` is shown, never followed). Two refinements keep it exact:

- a cell that is a plain number (``-3``, ``+2.5``) is a number to a spreadsheet, not a
  formula, and stays as it is: scale codes from -3 to 3 read as numbers everywhere;
- a cell that already begins with ``'`` before such a character gets one more, so that
  :func:`restored` gives back exactly what was written, whatever a participant typed.

Numeric columns are never touched: only text is. Parquet and ``.sav`` files keep every text
as written (no spreadsheet evaluates them), and so does ``ozlab export --raw-csv``.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from bot.core.errors import StudyDataError

FILE_MODE = 0o600
FOLDER_MODE = 0o700
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _formula(text: str) -> bool:
    return text.startswith(FORMULA_STARTS) and _NUMBER.fullmatch(text) is None


def neutralised(cell: str) -> str:
    """``cell`` as a CSV holds it: a leading ``'`` when a spreadsheet would evaluate it."""
    return "'" + cell if _formula(cell.lstrip("'")) else cell


def restored(cell: str) -> str:
    """What was written, from a cell :func:`neutralised` gave (the exact inverse)."""
    return cell[1:] if cell.startswith("'") and _formula(cell.lstrip("'")) else cell


def write_rows(
    handle: TextIO, header: Iterable[str], rows: Iterable[Iterable[object]], *, raw: bool = False
) -> None:
    """A CSV of ``rows`` under ``header``, every text cell neutralised (unless ``raw``)."""
    writer = csv.writer(handle)
    writer.writerow(header)
    for row in rows:
        writer.writerow(
            [neutralised(cell) if isinstance(cell, str) and not raw else cell for cell in row]
        )


def private_folder(folder: Path) -> Path:
    """``folder``, made with every missing parent (each 0700) when it is not there yet."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        for path in reversed(missing):
            with contextlib.suppress(FileExistsError):  # made meanwhile: it keeps its mode
                path.mkdir(mode=FOLDER_MODE)
                path.chmod(FOLDER_MODE)  # the umask may have narrowed it further
    except OSError as error:
        raise StudyDataError(f"cannot make the folder {folder}: {error.strerror}") from error
    if not folder.is_dir():
        raise StudyDataError(f"cannot write into {folder}: it is a file, not a folder")
    return folder


def private_path(path: Path) -> Path:
    """``path`` made an empty file of its owner's only, for a writer that takes a path (it
    truncates the file and keeps its mode); returns ``path``."""
    os.close(_opened(path))
    return path


@contextlib.contextmanager
def private_file(path: Path) -> Iterator[TextIO]:
    """``path`` opened for writing from scratch, owner-only: UTF-8 text, newlines as
    written (as the csv module needs)."""
    with os.fdopen(_opened(path), "w", encoding="utf-8", newline="") as handle:
        yield handle


def write_private(path: Path, content: str | bytes) -> Path:
    """``content`` written to ``path``, owner-only; returns ``path``."""
    descriptor = _opened(path)
    if isinstance(content, bytes):
        with os.fdopen(descriptor, "wb") as binary:
            binary.write(content)
    else:
        with os.fdopen(descriptor, "w", encoding="utf-8") as text:
            text.write(content)
    return path


def _opened(path: Path) -> int:
    """A descriptor on ``path``, emptied, mode 0600 (an older file may have been readable
    by others; a device such as ``/dev/null`` is left as it is)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    except OSError as error:
        raise StudyDataError(f"cannot write {path}: {error.strerror}") from error
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.fchmod(descriptor, FILE_MODE)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def private_database(path: str | Path) -> None:
    """An empty file for a study database about to be made, owner-only (SQLite gives the
    files it keeps beside it, ``-wal`` and ``-shm``, the database's own mode)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE))
