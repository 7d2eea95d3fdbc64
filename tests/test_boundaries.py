"""The layers keep to their jobs: SQL only behind the store, no I/O in the engine."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PRODUCTION = ("bot", "scenarios", "questionnaires", "analytics", "wizard_console")
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+"
    r"(TABLE|INDEX)|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE)\b",
    re.IGNORECASE | re.DOTALL,
)


def modules_outside_the_store() -> list[Path]:
    found = [p for package in PRODUCTION for p in (ROOT / package).rglob("*.py")]
    return [p for p in found if (ROOT / "bot" / "store") not in p.parents]


@pytest.mark.parametrize(
    "path", modules_outside_the_store(), ids=lambda p: str(p.relative_to(ROOT))
)
def test_no_sql_and_no_sqlite_outside_the_store(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert not imported & {"sqlite3", "aiosqlite"}, "only bot/store talks to the database"
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert not [s for s in strings if SQL.search(s)], "SQL belongs in bot/store"
