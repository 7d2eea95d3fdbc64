"""CSV files a researcher writes (stimuli, authored stress tests), read row by row with the
line each row starts on, so that every problem names its file and line like a YAML one."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from pathlib import Path

from scenarios.yaml_lines import Problem


def csv_records(
    file: Path,
    text: str,
    problems: list[Problem],
    header_ok: Callable[[int, list[str]], bool],
    *,
    lower: bool = False,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Each data row as ``(line, {column: value})``; blank rows are skipped, a row of the
    wrong width and broken CSV become problems. ``header_ok(line, names)`` checks the header
    (adding its own problems) and says whether to read on; ``lower``: names in lower case."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    line = 1
    try:
        for row in reader:
            start, line = line, reader.line_num + 1
            if all(not cell.strip() for cell in row):
                continue
            if header is None:
                header = [name.strip().lower() if lower else name.strip() for name in row]
                if not header_ok(start, header):
                    return
                continue
            if len(row) != len(header):
                message = (
                    f"this row has {len(row)} values but the header has {len(header)} columns"
                    ' (a value with a comma needs "quotes")'
                )
                problems.append(Problem(file, start, "", message))
                continue
            yield start, dict(zip(header, row, strict=True))
    except csv.Error as error:
        problems.append(Problem(file, reader.line_num or line, "", f"CSV syntax error: {error}"))
