"""The export files' reference is written from the columns the export declares, and lists
every file the export can write: neither can go stale while the code changes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analytics.io import export_reference
from analytics.io.export_reference import FILES, reference

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "export-files.md"


def written_files() -> set[str]:
    """The names of the files the export's code can write: every key of a table dictionary
    (``{"votes": Table(...)}``, ``found["responses_wide"] = ...``) in its modules."""
    names = set()
    for module in (ROOT / "analytics" / "io").glob("export*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(value, ast.Call)
                        and isinstance(value.func, ast.Name)
                        and value.func.id == "Table"
                    ):
                        names.add(str(key.value))
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Subscript)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in ("found", "typed")
                        and isinstance(target.slice, ast.Constant)
                    ):
                        names.add(str(target.slice.value))
    return names


def test_the_committed_page_is_what_the_export_declares(
    capsys: pytest.CaptureFixture[str],
) -> None:
    export_reference.main()
    assert capsys.readouterr().out == reference()
    assert PAGE.read_text(encoding="utf-8") == reference(), (
        "docs/reference/export-files.md is stale: "
        "python -m analytics.io.export_reference > docs/reference/export-files.md"
    )


def test_every_file_the_export_writes_is_in_the_reference() -> None:
    found = written_files()
    assert {"sessions", "votes", "responses_wide", "columns", "stress_results"} <= found
    assert found == {f.name for f in FILES}


def test_the_export_guide_names_every_file_and_links_the_reference() -> None:
    guide = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    assert "reference/export-files.md" in guide
    missing = [f.name for f in FILES if f"`{f.name}`" not in guide]
    assert not missing, f"docs/export.md never mentions {missing}"
