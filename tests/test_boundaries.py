"""The layers keep to their jobs: SQL only behind the store, no I/O in the engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.source_facts import source_of

ROOT = Path(__file__).parents[1]
PRODUCTION = ("bot", "scenarios", "questionnaires", "analytics", "wizard_console", "lab_web")
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
    source = source_of(path)
    imported = {i.module.split(".")[0] for i in source.imports}
    assert not imported & {"sqlite3", "aiosqlite"}, "only bot/store talks to the database"
    assert not [s for s in source.strings if SQL.search(s)], "SQL belongs in bot/store"


LAYERS: tuple[tuple[str, ...], ...] = (
    ("bot.core",),
    ("questionnaires",),
    ("scenarios",),
    ("bot.engine",),
    ("bot.store", "bot.systems", "bot.speech"),
    ("bot.telegram",),
    ("bot.recruitment", "bot.rights", "bot.check", "bot.desk"),
    ("bot.annotation",),
    ("bot.runtime",),
    ("bot.pilot", "bot.stress"),
    ("analytics", "wizard_console"),
    ("lab_web",),
    ("bot.cli",),
)
"""Each package imports only the packages of the layers before its own (and itself): the
one way the code depends, from the command line down to the vocabulary."""


def package_of(module: str) -> str:
    if module.endswith(".__main__"):  # ``python -m analytics``: an entry point, as the CLI is
        return "bot.cli"
    named = [p for layer in LAYERS for p in layer if module == p or module.startswith(p + ".")]
    assert named, f"{module} belongs to no layer: add its package to LAYERS"
    return max(named, key=len)


def rank(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for i in source_of(path).imports:
        if not i.is_from:
            found.add(i.module)
        elif i.module and i.level == 0:
            found |= {f"{i.module}.{name}" for name in i.names}
    return {m for m in found if m.split(".")[0] in PRODUCTION}


def test_every_package_imports_only_the_layers_below_it() -> None:
    upward: list[str] = []
    for path in sorted(p for package in PRODUCTION for p in (ROOT / package).rglob("*.py")):
        module = module_name(path)
        if module in ("bot",):
            continue
        mine = package_of(module)
        for imported in sorted(imports_of(path)):
            if imported == "bot" or imported.startswith("bot.__"):
                continue
            theirs = package_of(imported)
            if theirs != mine and rank(theirs) >= rank(mine):
                upward.append(f"{module} imports {imported} ({theirs}, not below {mine})")
    assert not upward, "\n".join(upward)
