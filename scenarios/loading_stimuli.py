"""The rows of a rating task: a CSV or JSONL file beside its scenario file.

Researchers export these from spreadsheets and scripts, so every problem is told with the
stimuli file's own path and line (a row number alone would not find it in a 500-row file).

- CSV: a header row, then one row per stimulus. The ``id`` column names each row; without
  one, rows are numbered 1, 2, ... in file order (the header not counted).
- JSONL: one JSON object per line. Its ``id`` key names it; without one, objects are
  numbered 1, 2, ... in file order (blank lines skipped). Numbers become text.

The id is stored with every rating and is not one of the stimulus' ``fields``: those are
what a participant is shown, and an id means nothing to them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from string import Formatter

from scenarios.csv_lines import csv_records
from scenarios.models import Stimulus
from scenarios.yaml_lines import Problem, Resource, read_text

__all__ = ["STIMULI_SUFFIXES", "Table", "check_template", "read_stimuli", "template_columns"]

STIMULI_SUFFIXES = (".csv", ".jsonl")


@dataclass(frozen=True)
class Table:
    """Stimuli with the line each one starts on, to place later problems."""

    file: Path
    rows: tuple[tuple[int, Stimulus], ...]
    header_line: int | None = None
    """CSV: the line of the header, where a missing column is told."""

    @property
    def stimuli(self) -> tuple[Stimulus, ...]:
        return tuple(stimulus for _, stimulus in self.rows)


def template_columns(template: str) -> list[str]:
    """The ``{column}`` names a stimulus template uses; ValueError when it is malformed."""
    columns: list[str] = []
    for _, name, _, _ in Formatter().parse(template):
        if name is None:
            continue
        if not name or name.isdigit() or any(mark in name for mark in ".[]"):
            raise ValueError(
                f"{{{name}}} is not a column: each {{...}} names a column, such as {{mr}};"
                " write {{ and }} for a brace itself"
            )
        if name not in columns:
            columns.append(name)
    return columns


def read_stimuli(file: Path, resource: Resource, problems: list[Problem]) -> Table | None:
    """The rows of a ``.csv`` or ``.jsonl`` file, or None when it cannot be used at all."""
    text = read_text(file, resource, problems)
    if text is None:
        return None
    before = len(problems)
    table = (
        _read_jsonl(file, text, problems)
        if file.suffix == ".jsonl"
        else _read_csv(file, text, problems)
    )
    if not table.rows and len(problems) == before:
        problems.append(Problem(file, table.header_line, "", "has no rows to rate"))
    _unique_ids(table, problems)
    return table


def check_template(table: Table, columns: list[str], problems: list[Problem]) -> None:
    """Every ``{column}`` the template names must be filled by every row."""
    for column in columns:
        lacking = [line for line, stimulus in table.rows if column not in stimulus.fields]
        if not lacking:
            continue
        message = f"no {column!r} for {{{column}}} of the scenario's stimulus_template"
        if table.header_line is not None:
            present = ", ".join(table.rows[0][1].fields) if table.rows else ""
            problems.append(
                Problem(table.file, table.header_line, "", f"{message} (columns: {present})")
            )
        else:
            more = f" (nor on {len(lacking) - 1} more lines)" if len(lacking) > 1 else ""
            problems.append(Problem(table.file, lacking[0], "", message + more))


def _unique_ids(table: Table, problems: list[Problem]) -> None:
    first: dict[str, int] = {}
    for line, stimulus in table.rows:
        if stimulus.id in first:
            message = f"id {stimulus.id!r} is already used on line {first[stimulus.id]}"
            problems.append(Problem(table.file, line, "id", message))
        first.setdefault(stimulus.id, line)


def _read_csv(file: Path, text: str, problems: list[Problem]) -> Table:
    header_line = 1
    rows: list[tuple[int, Stimulus]] = []

    def header_ok(line: int, header: list[str]) -> bool:
        nonlocal header_line
        header_line = line
        _check_header(file, line, header, problems)
        return True

    for line, fields in csv_records(file, text, problems, header_ok):
        stimulus = _stimulus(file, line, fields, len(rows), problems)
        if stimulus is not None:
            rows.append((line, stimulus))
    return Table(file, tuple(rows), header_line)


def _stimulus(
    file: Path, line: int, fields: dict[str, str], before: int, problems: list[Problem]
) -> Stimulus | None:
    """A row as a stimulus: its ``id`` taken out of what is shown, or its number as id."""
    shown = {key: value for key, value in fields.items() if key != "id"}
    if "id" not in fields:
        return Stimulus(id=str(before + 1), fields=shown)
    if not fields["id"].strip():
        problems.append(Problem(file, line, "id", "the id is empty"))
        return None
    return Stimulus(id=fields["id"].strip(), fields=shown)


def _check_header(file: Path, line: int, header: list[str], problems: list[Problem]) -> None:
    for index, name in enumerate(header):
        if not name:
            message = f"column {index + 1} of the header has no name"
            problems.append(Problem(file, line, "", message))
        elif name in header[:index]:
            problems.append(Problem(file, line, name, f"column {name!r} appears twice"))


def _read_jsonl(file: Path, text: str, problems: list[Problem]) -> Table:
    rows: list[tuple[int, Stimulus]] = []
    has_ids: bool | None = None
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            message = f"JSON syntax error: {error.msg} (column {error.colno})"
            problems.append(Problem(file, line, "", message))
            continue
        if not isinstance(value, dict):
            message = 'each line must be one JSON object, such as {"id": "a1", "text": "..."}'
            problems.append(Problem(file, line, "", message))
            continue
        fields = _texts(file, line, value, problems)
        if fields is None:
            continue
        if has_ids is None:
            has_ids = "id" in fields
        if ("id" in fields) != has_ids:
            message = (
                "this line has no 'id' but earlier lines have one"
                if has_ids
                else "earlier lines have no 'id' and are numbered: give every line an id, or none"
            )
            problems.append(Problem(file, line, "id", message))
            continue
        stimulus = _stimulus(file, line, fields, len(rows), problems)
        if stimulus is not None:
            rows.append((line, stimulus))
    return Table(file, tuple(rows))


def _texts(
    file: Path, line: int, value: dict[str, object], problems: list[Problem]
) -> dict[str, str] | None:
    """A JSON object's values as text: strings as they are, numbers written out."""
    fields: dict[str, str] = {}
    for key, entry in value.items():
        if isinstance(entry, str):
            fields[key] = entry
        elif isinstance(entry, int | float) and not isinstance(entry, bool):
            fields[key] = json.dumps(entry)
        else:
            kind = "null" if entry is None else type(entry).__name__
            kind = {"dict": "an object", "list": "a list", "bool": "true/false"}.get(kind, kind)
            message = f"{key!r} must be text or a number, not {kind}"
            problems.append(Problem(file, line, key, message))
            return None
    return fields
