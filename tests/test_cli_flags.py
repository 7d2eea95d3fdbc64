"""A flag means the same in every command: ``--db`` (or ``OZLAB_DB``) the study database,
``-n/--participants`` a count of participants, ``--study`` a study file or a study's id,
said in ``--help``. ``analytics report`` is ``ozlab report``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import ANALYTICS, OZLAB, parser
from bot.cli.flags import DB_ENV
from tests.command_line import ozlab_here

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = {"demo", "pilot", "chat"}  # their own scratch databases, never OZLAB_DB's


def commands(
    top: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and action under ``top``, with the words that name it."""
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from commands(sub, (*path, name))


def options(sub: argparse.ArgumentParser, flag: str) -> list[argparse.Action]:
    return [a for a in sub._actions if flag in a.option_strings]


def test_every_db_is_the_study_database_or_ozlab_db() -> None:
    for words, sub in commands(parser()):
        for action in options(sub, "--db"):
            if words[0] in SCRATCH:
                assert f"not {DB_ENV}" in (action.help or ""), words
            else:
                assert DB_ENV in (action.help or ""), words


def test_every_study_option_says_file_or_id() -> None:
    seen = 0
    for words, sub in commands(parser()):
        for action in options(sub, "--study"):
            seen += 1
            text = action.help or ""
            assert "study file" in text or " id" in text, (words, text)
    assert seen >= 8


def test_a_count_of_participants_is_n_everywhere_and_the_old_spelling_stays() -> None:
    for words in (["demo"], ["pilot", "hmd"], ["invite", "--db", "x", "--bot", "b"]):
        for flag in ("-n", "--participants", "--n"):
            args = parser().parse_args([*words, flag, "7"])
            assert args.participants == 7, (words, flag)


def test_analytics_has_the_very_commands_of_ozlab() -> None:
    assert set(ANALYTICS) <= set(OZLAB)
    analysis = {words for words, _ in commands(parser("analytics", ANALYTICS))}
    ozlab = {words for words, _ in commands(parser())}
    assert analysis <= ozlab and ("report",) in analysis


def run(*argv: str | Path, cwd: Path, db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OZLAB_", "TELEGRAM_"))}
    env |= {"PYTHONPATH": str(ROOT), DB_ENV: str(db)}
    return subprocess.run(
        [sys.executable, "-m", *map(str, argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ozlab_db_stands_in_for_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo and the backup run in this process, in ``tmp_path`` with ``OZLAB_DB`` set;
    the reports as ``ozlab`` and ``analytics`` processes (``python -m``) of their own."""
    for name in [k for k in os.environ if k.startswith(("OZLAB_", "TELEGRAM_"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    study = tmp_path / "study.sqlite"
    monkeypatch.setenv(DB_ENV, str(study))
    played = ozlab_here("demo", "-n", "1", "--annotators", "0")
    assert played.returncode == 0, played.stderr
    assert not study.exists()  # a demo never replaces OZLAB_DB's database
    db = tmp_path / "ozlab-demo.sqlite"
    monkeypatch.setenv(DB_ENV, str(db))
    copied = ozlab_here("backup", "--out", "copy.sqlite")
    assert copied.returncode == 0 and (tmp_path / "copy.sqlite").exists(), copied.stderr
    for module in ("bot.cli", "analytics"):
        reported = run(module, "report", "--format", "json", cwd=tmp_path, db=db)
        assert reported.returncode == 0, reported.stderr
        assert reported.stdout.lstrip().startswith("{")


def test_nothing_imports_the_command_line_as_a_library() -> None:
    """The command line is the top: capabilities never reach up into it (a ``__main__`` is
    a way in, ``python -m``, not a use)."""
    import ast

    found = []
    for package in ("bot", "scenarios", "questionnaires", "analytics", "wizard_console"):
        for path in (ROOT / package).rglob("*.py"):
            if ROOT / "bot" / "cli" in path.parents or path.name == "__main__.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                found += [
                    f"{path.relative_to(ROOT)}: {n}" for n in names if n.startswith("bot.cli")
                ]
    assert found == []
