"""What the syntax-tree tests read of a source file (its imports and its string constants),
parsed once per test process and kept without the tree: the layers, the SQL, and the
packaging tests each parsed every module again (about 2.5 ms a module), and keeping the
trees instead slowed every later garbage collection more than the parses cost."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """``import a.b`` is (module "a.b", names (), level 0); ``from .x import y, z`` is
    (module "x", names ("y", "z"), level 1); ``from . import y`` has the module ""."""

    module: str
    names: tuple[str, ...]
    level: int

    @property
    def is_from(self) -> bool:
        return bool(self.names)


@dataclass(frozen=True)
class Source:
    imports: tuple[Import, ...]
    strings: tuple[str, ...]


@functools.cache
def source_of(path: Path) -> Source:
    imports: list[Import] = []
    strings: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            imports += [Import(alias.name, (), 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            imports.append(Import(node.module or "", tuple(a.name for a in node.names), node.level))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node.value)
    return Source(tuple(imports), tuple(strings))
