"""What ``pip install -e '.[test]'`` installs is what the suite imports, and what ozlab declares
it needs is what its code imports: a fresh clone's ``pytest`` must not fail at collection
(pyarrow used to be only in the ``parquet`` extra), and no package is installed for nothing
(aiosqlite was declared and never imported)."""

from __future__ import annotations

import functools
import re
import sys
import tomllib
from collections.abc import Mapping
from importlib.metadata import packages_distributions
from pathlib import Path

from tests.source_facts import source_of

ROOT = Path(__file__).resolve().parents[1]
CODE = ("bot", "analytics", "scenarios", "questionnaires", "wizard_console", "lab_web")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
OURS = {
    "bot",
    "analytics",
    "scenarios",
    "questionnaires",
    "wizard_console",
    "lab_web",
    "tests",
    "bench",
}


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalised as PyPI does."""
    bare = re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def _imported(folders: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level modules imported by the files under ``folders``, outside the standard
    library and ozlab itself, each with the files that import it."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            for i in source_of(path).imports:
                if not i.module or i.level != 0:
                    continue
                top = i.module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OURS:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


@functools.cache
def _installed() -> Mapping[str, list[str]]:
    """Each module and the distributions that provide it: read when a test asks (a fifth of
    a second of every test process's collection when it was read at import)."""
    return packages_distributions()


def _distributions(module: str) -> set[str]:
    return {_name(d) for d in _installed().get(module, [module])}


def test_the_test_extra_has_everything_the_tests_import() -> None:
    declared = {
        _name(r) for r in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["test"]]
    }
    undeclared = {
        module: sorted(files)[:3]
        for module, files in _imported(("tests",)).items()
        if not _distributions(module) & declared
    }
    assert undeclared == {}


def test_every_declared_dependency_is_imported_by_ozlab() -> None:
    imported = set().union(*(_distributions(m) for m in _imported(CODE)))
    unused = {_name(r) for r in PROJECT["dependencies"]} - imported
    assert unused == set()
