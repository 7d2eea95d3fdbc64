"""The project's source files, each parsed once per test process: several tests read the
syntax tree of every module (the layers, the dependencies, the store's roles, the command
line's flags), and parsing took most of their time, each parsing every file again."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def tree_of(path: Path) -> ast.Module:
    """The syntax tree of the file at ``path`` (shared: a test reads it, never changes it)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))
