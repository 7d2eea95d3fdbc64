"""The store as roles: small protocols a client names, one union a backend implements, and
no client that reaches past them for the SQLite backend."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path
from typing import Protocol

import pyarrow
import pytest

from bot.core import phenomena
from bot.core import stress as stress_model
from bot.engine import effects
from bot.engine.annotating import model as annotating_model
from bot.store import interface, sqlite, stress_records
from bot.store.interface import ROLES, StudyStore
from bot.store.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ("bot", "analytics", "wizard_console", "scenarios", "questionnaires")
MOST_METHODS = 15


def own_methods(role: type) -> dict[str, object]:
    """The methods a protocol declares itself (not those of the protocols it unites)."""
    return {
        name: value
        for name, value in vars(role).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }


def test_the_roles_are_the_protocols_the_interface_declares() -> None:
    declared = {
        value
        for value in vars(interface).values()
        if isinstance(value, type)
        and value.__module__ == interface.__name__
        and value is not StudyStore
    }
    assert declared == set(ROLES)
    assert all(getattr(role, "_is_protocol", False) for role in (*ROLES, StudyStore))
    assert set(StudyStore.__mro__) >= set(ROLES)


@pytest.mark.parametrize("role", ROLES, ids=lambda role: role.__name__)
def test_no_role_is_over_fifteen_methods(role: type) -> None:
    assert 0 < len(own_methods(role)) <= MOST_METHODS


def test_every_method_of_the_store_is_in_exactly_one_role() -> None:
    union = {
        name
        for name in dir(StudyStore)
        if not name.startswith("_") and name not in dir(Protocol) and name != "ROLES"
    }
    owners: dict[str, list[str]] = {}
    for role in ROLES:
        for name in own_methods(role):
            owners.setdefault(name, []).append(role.__name__)
    assert set(owners) == union
    assert {name: roles for name, roles in owners.items() if len(roles) != 1} == {}
    assert own_methods(StudyStore) == {}  # the union adds nothing of its own


@pytest.mark.parametrize("role", ROLES, ids=lambda role: role.__name__)
def test_the_sqlite_backend_implements_every_role_with_the_same_signature(role: type) -> None:
    for name, declared in own_methods(role).items():
        implemented = getattr(SqliteStore, name, None)
        assert implemented is not None, f"SqliteStore has no {name}"
        assert _shape(implemented) == _shape(declared), name
        assert _hints(implemented) == _hints(declared), name
        assert inspect.iscoroutinefunction(implemented) == inspect.iscoroutinefunction(declared), (
            name
        )


def _shape(method: object) -> list[tuple[str, object, object]]:
    """Parameter names, kinds and defaults: what a caller relies on beside the types."""
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(method).parameters.values()  # type: ignore[arg-type]
    ]


def _hints(method: object) -> dict[str, object]:
    """The annotations, resolved: ``fx.Record`` and ``Record`` are the same type (and
    ``pyarrow``, which the store names only for type checkers, is the module)."""
    names: dict[str, object] = {"fx": effects, "pyarrow": pyarrow}
    modules = (
        effects,
        annotating_model,
        interface,
        sqlite,
        stress_records,
        stress_model,
        phenomena,
    )
    for module in modules:
        names.update(vars(module))
    return typing.get_type_hints(method, globalns=names)


def _client_modules() -> list[Path]:
    found: list[Path] = []
    for folder in CLIENTS:
        found += [
            path
            for path in sorted((ROOT / folder).rglob("*.py"))
            if not path.is_relative_to(ROOT / "bot" / "store")
        ]
    return found


def offences(source: str) -> list[str]:
    """Where a module names the SQLite backend in code (prose may name it)."""
    found: list[str] = []
    if "sqlite" not in source and "SqliteStore" not in source:
        return found  # neither the name nor the module's: nothing to parse (most modules)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "SqliteStore":
            found.append(f"{node.lineno}: SqliteStore")
        elif isinstance(node, ast.ImportFrom) and (
            node.module == "bot.store.sqlite"
            or (node.module == "bot.store" and any(a.name == "sqlite" for a in node.names))
        ):
            found.append(f"{node.lineno}: imports bot.store.sqlite")
    return found


def test_the_check_finds_a_client_that_names_the_backend() -> None:
    sample = (
        "from bot.store.sqlite import SqliteStore\n"
        "from bot.store import sqlite\n"
        "def f(s: SqliteStore) -> None: ...\n"
    )
    assert offences(sample) == [
        "1: imports bot.store.sqlite",
        "2: imports bot.store.sqlite",
        "3: SqliteStore",
    ]


def test_no_client_names_the_sqlite_backend() -> None:
    """Clients name roles and open a study through ``bot.store.open_store``: the next
    backend is added behind the opener, not at every call site."""
    found = {
        str(path.relative_to(ROOT)): offences(path.read_text(encoding="utf-8"))
        for path in _client_modules()
    }
    assert {where: lines for where, lines in found.items() if lines} == {}
