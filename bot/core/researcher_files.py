"""The files ozlab hands a researcher hold participants' data (their words, pseudonyms,
platform ids, live invitation codes): each is its owner's only, and no cell of a CSV is a
formula a spreadsheet would run.

**Modes.** Files are written 0600 and the folders ozlab makes for them 0700, as the study
database is, whatever the umask; a file written again over a readable one is tightened to
0600. A folder that exists already keeps its mode (it may be the researcher's home).

**CSV cells** (OWASP's rule against CSV injection): a text cell that begins with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a ``'`` before it, so Excel,
LibreOffice Calc and Google Sheets show it as text instead of evaluating it
(``=HYPERLINK(...)`` is shown, never followed). The rule holds **per line**: a reader that
ends a row at a line break inside a cell (a spreadsheet reading an unquoted carriage return,
a tool that splits at U+2028) starts a row with that line, so every line start of a cell
(after CR, LF, CRLF and every other break :meth:`str.splitlines` knows: U+0085, U+2028, …)
gets the same ``'`` when what follows would run; and a cell that holds any line break is
quoted, whatever the file's line terminator. Two refinements keep it exact:

- a cell (or its last line) that is a plain number (``-3``, ``+2.5``) is a number to a
  spreadsheet, not a formula, and stays as it is: scale codes from -3 to 3 read as numbers
  everywhere;
- a line that already begins with ``'`` before such a character gets one more, so that
  :func:`restored` gives back exactly what was written, whatever a participant typed.

Numeric columns are never touched: only text is. Parquet and ``.sav`` files keep every text
as written (no spreadsheet evaluates them), and so does ``ozlab export --raw-csv`` (whose
cells with line breaks are quoted all the same).
"""

from __future__ import annotations

import contextlib
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
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # those str.splitlines knows
_BREAK = re.compile(f"[{_LINE_BREAKS}]")


def _runs(line: str, last: bool) -> bool:
    """Whether a spreadsheet would evaluate what starts at this line (with the lines after
    it, unless ``last``): a formula's first character, not a plain number."""
    text = line.lstrip("'")
    return text.startswith(FORMULA_STARTS) and not (last and _NUMBER.fullmatch(text))


def _lines(cell: str) -> list[tuple[str, bool]]:
    """The cell's lines, each with its line break, and whether it is the last."""
    lines = cell.splitlines(keepends=True)
    return [(line, n == len(lines) - 1) for n, line in enumerate(lines)]


def neutralised(cell: str) -> str:
    """``cell`` as a CSV holds it: a leading ``'`` on every line a spreadsheet would
    evaluate."""
    if _BREAK.search(cell) is None:  # most cells: one line, not split
        return "'" + cell if _runs(cell, True) else cell
    return "".join("'" + line if _runs(line, last) else line for line, last in _lines(cell))


def restored(cell: str) -> str:
    """What was written, from a cell :func:`neutralised` gave (the exact inverse: a ``'``
    never makes or joins a line break, so the lines are the same)."""
    return "".join(
        line[1:] if line.startswith("'") and _runs(line, last) else line
        for line, last in _lines(cell)
    )


def write_rows(
    handle: TextIO, header: Iterable[str], rows: Iterable[Iterable[object]], *, raw: bool = False
) -> None:
    """A CSV of ``rows`` under ``header``, one ``\\n`` a row, every text cell neutralised
    (unless ``raw``); ``None`` is an empty cell."""
    handle.write(_record(header))
    for row in rows:
        handle.write(
            _record(
                neutralised(cell) if isinstance(cell, str) and not raw else cell for cell in row
            )
        )


_QUOTED = re.compile(f'[",{_LINE_BREAKS}]')
"""What a field is quoted for: the delimiter, the quote, and every line break
:meth:`str.splitlines` knows (the csv module quotes only those of its line terminator, so a
bare CR was left unquoted under ``\\n``, and a spreadsheet ended the row there)."""
_QUOTE_OR_BREAK = re.compile(f'["{_LINE_BREAKS}]')


def _field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if _QUOTED.search(text) else text


def _record(cells: Iterable[object]) -> str:
    fields = ["" if cell is None else str(cell) for cell in cells]
    line = ",".join(fields)
    if line.count(",") != len(fields) - 1 or _QUOTE_OR_BREAK.search(line):  # some need quotes
        line = ",".join(map(_field, fields))
    return (line or '""') + "\n"  # a row of one empty cell, not an empty line readers skip


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
    written (a CSV's own line ends stay as its writer made them)."""
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
