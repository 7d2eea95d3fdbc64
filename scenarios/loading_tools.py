"""Where a scenario's tools get their results: a table or a Python function beside it.

A researcher writes what each tool returns without writing a system:

- a ``.csv`` table: a column per argument the row is matched on (an empty cell matches
  any value) and a ``result`` column, what the model is told; the first row that matches
  a call answers it;
- a ``.yaml`` table: ``rows:``, each ``{when: {argument: value}, result: ...}`` where the
  result may be text or any structure (the model gets it as JSON);
- a ``function: tools.py:name`` beside the scenario file (or ``package.module:name``),
  called with the call's arguments as keyword arguments.

Every problem names the file and line where it is, as ``ozlab check`` does for the study.
A function is not imported here (loading a study runs no researcher code): its file must
exist and define the function at top level; the bot imports it when it starts.
"""

from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict

from scenarios.csv_lines import csv_records
from scenarios.models import Tool, ToolRow, ToolSource
from scenarios.yaml_lines import Document, Problem, Resource, load_file, read_text

__all__ = ["RESULT_COLUMN", "TABLE_SUFFIXES", "tool_sources"]

RESULT_COLUMN = "result"
TABLE_SUFFIXES = (".csv", ".yaml", ".yml")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    when: dict[str, str | int | float | bool] = {}
    """Argument → the value a call must give it for this row to answer."""
    result: Any
    """What the model is told: text, or any structure (sent as JSON)."""


class ToolTable(BaseModel):
    """A tool's results in YAML: ``rows``, the first that matches a call answers it."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    rows: tuple[_Row, ...]
    """The rows, in the order they are tried."""


def _beside(name: str) -> tuple[str, ...] | None:
    """The parts of a file name beside the scenario file, or None when it is not one."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if not parts or name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
        return None
    return parts


def tool_sources(
    document: Document, tools: list[Any], folder: Resource, problems: list[Problem]
) -> tuple[dict[str, ToolSource], list[Path]]:
    """Each well-formed tool's source, and the files read; problems are added."""
    sources: dict[str, ToolSource] = {}
    files: list[Path] = []
    for index, raw in enumerate(tools):
        if not isinstance(raw, dict):
            continue  # validation says so
        try:
            tool = Tool.model_validate(raw)
        except ValueError:
            continue  # validation says so, at its field
        if tool.results is not None:
            loc: tuple[str | int, ...] = ("tools", index, "results")
            source = _table(document, loc, tool, folder, problems, files)
        else:
            loc = ("tools", index, "function")
            source = _function(document, loc, tool.function or "", folder, problems, files)
        if source is not None:
            sources[tool.name] = source
    return sources, files


def _table(
    document: Document,
    loc: tuple[str | int, ...],
    tool: Tool,
    folder: Resource,
    problems: list[Problem],
    files: list[Path],
) -> ToolSource | None:
    name = tool.results or ""
    parts = _beside(name)
    if parts is None or not name.endswith(TABLE_SUFFIXES):
        message = f"{name!r} must be a .csv or .yaml file beside this scenario file"
        problems.append(document.problem(loc, message))
        return None
    resource = folder.joinpath(*parts)
    file = Path(str(resource))
    files.append(file)
    if not resource.is_file():
        line, _ = document.where(loc)
        message = f"file not found (named by tools on line {line} of {document.file})"
        problems.append(Problem(file, None, "", message))
        return None
    before = len(problems)
    if file.suffix == ".csv":
        rows = _csv_rows(file, resource, tool, problems)
    else:
        rows = _yaml_rows(file, resource, tool, problems)
    if rows is None or len(problems) > before:
        return None
    if not rows:
        problems.append(Problem(file, None, "", f"has no rows: tool {tool.name!r} answers none"))
        return None
    return ToolSource(rows=tuple(rows))


def _csv_rows(
    file: Path, resource: Resource, tool: Tool, problems: list[Problem]
) -> list[ToolRow] | None:
    text = read_text(file, resource, problems)
    if text is None:
        return None

    def header_ok(line: int, names: list[str]) -> bool:
        if RESULT_COLUMN not in names:
            message = f"no {RESULT_COLUMN!r} column: it holds what the tool returns"
            problems.append(Problem(file, line, "", message))
            return False
        unknown = [n for n in names if n != RESULT_COLUMN and n not in tool.arguments]
        if unknown:
            known = ", ".join(tool.arguments) or "none"
            message = (
                f"column {unknown[0]!r} is not an argument of tool {tool.name!r}"
                f" (its arguments: {known})"
            )
            problems.append(Problem(file, line, "", message))
            return False
        return True

    rows = []
    for line, record in csv_records(file, text, problems, header_ok):
        when = {k: v.strip() for k, v in record.items() if k != RESULT_COLUMN and v.strip()}
        rows.append(ToolRow(line=line, when=when, result=record[RESULT_COLUMN]))
    return rows


def _yaml_rows(
    file: Path, resource: Resource, tool: Tool, problems: list[Problem]
) -> list[ToolRow] | None:
    document, table = load_file(file, resource, ToolTable, problems)
    if document is None or table is None:
        return None
    rows = []
    for index, row in enumerate(table.rows):
        for argument in row.when:
            if argument not in tool.arguments:
                known = ", ".join(tool.arguments) or "none"
                message = (
                    f"{argument!r} is not an argument of tool {tool.name!r} (its arguments:"
                    f" {known})"
                )
                problems.append(document.problem(("rows", index, "when", argument), message))
        line, _ = document.where(("rows", index))
        when = {k: str(v).strip() for k, v in row.when.items()}
        rows.append(ToolRow(line=line, when=when, result=row.result))
    return rows


def _function(
    document: Document,
    loc: tuple[str | int, ...],
    entry: str,
    folder: Resource,
    problems: list[Problem],
    files: list[Path],
) -> ToolSource | None:
    where, colon, name = entry.rpartition(":")
    if not colon or not name.isidentifier() or not where:
        message = f"{entry!r} is not of the form tools.py:function or package.module:function"
        problems.append(document.problem(loc, message))
        return None
    if not where.endswith(".py"):
        if not all(part.isidentifier() for part in where.split(".")):
            problems.append(document.problem(loc, f"{where!r} is not a module name"))
            return None
        return ToolSource(file=where, function=name)
    parts = _beside(where)
    if parts is None:
        message = f"{where!r} must be a Python file beside this scenario file"
        problems.append(document.problem(loc, message))
        return None
    resource = folder.joinpath(*parts)
    file = Path(str(resource))
    files.append(file)
    text = read_text(file, resource, problems) if resource.is_file() else None
    if text is None:
        line, _ = document.where(loc)
        if not resource.is_file():
            message = f"file not found (named by tools on line {line} of {document.file})"
            problems.append(Problem(file, None, "", message))
        return None
    try:
        module = ast.parse(text, filename=str(file))
    except SyntaxError as error:
        problems.append(Problem(file, error.lineno, "", f"Python syntax error: {error.msg}"))
        return None
    defined = {
        node.name
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if name not in defined:
        message = f"{file.name} defines no function {name!r} at top level"
        problems.append(document.problem(loc, message))
        return None
    return ToolSource(file=str(file.resolve()), function=name)
