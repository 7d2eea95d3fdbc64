"""Analytics speaks the bot's vocabulary: a state, reason, status, moment, source or kind is
compared as the enum's member (``SessionState.ENDED.value``), never as a string typed again,
so a word renamed in ``bot/core/vocabulary.py`` cannot leave a report counting nothing."""

from __future__ import annotations

import ast
from enum import StrEnum
from pathlib import Path

import pytest

from bot.core import vocabulary

ROOT = Path(__file__).parents[1]
WORDS = {
    member.value
    for value in vars(vocabulary).values()
    if isinstance(value, type) and issubclass(value, StrEnum) and value is not StrEnum
    for member in value
}
OWN_WORDS = {"scenario_kind"}  # a study file's scenario kind ("rating"), not the bot's word


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for element in node.elts for s in _strings(element)]
    return []


def _column(node: ast.AST) -> str | None:
    """The column compared: ``frame["name"]``, also as ``frame["name"].astype(object)``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _column(node.func.value)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


def typed_again(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if _column(node.left) in OWN_WORDS:
                continue
            for side in (node.left, *node.comparators):
                found += [(node.lineno, s) for s in _strings(side) if s in WORDS]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("isin", "eq", "ne")
        ):
            for argument in node.args:
                found += [(node.lineno, s) for s in _strings(argument) if s in WORDS]
    return found


@pytest.mark.parametrize("path", sorted((ROOT / "analytics").glob("*.py")), ids=lambda p: p.name)
def test_analytics_compares_the_vocabulary_not_strings(path: Path) -> None:
    assert typed_again(ast.parse(path.read_text(), str(path))) == []


def test_a_string_typed_again_is_found() -> None:
    tree = ast.parse('a = s["state"] == "ended"\nb = s["status"].isin(["skipped", "x"])')
    assert typed_again(tree) == [(1, "ended"), (2, "skipped")]
