"""A researcher's mistakes at the command line: one line on stderr, no traceback, and an
exit status per kind of mistake (``bot/core/errors.py``), so that a script can tell them apart."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import SECRET_ENV, TOKEN_ENV, main
from bot.core.errors import (
    OzlabError,
    SchemaError,
    StoreError,
    StudyDataError,
    StudyFileError,
    SystemSetupError,
    TelegramSetupError,
)
from bot.core.privacy import Privacy
from scenarios.starter import write_starter
from tests.storage_probe import stamp_schema_version

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

SECRET = "s" * 32

BROKEN = """\
id: broken
title: Broken
texts:
  welcome: Hello
  consent: Do you agree?
  declined: Goodbye.
systems:
  - type: demo
    id: a
scenarios: [hmd-gift, missing]
"""


def ozlab(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, list[str]]:
    """Run ``ozlab ARGS`` in this process: its exit status and the lines of its stderr."""
    code = main([str(arg) for arg in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.splitlines()


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    study = tmp_path / "broken.yaml"
    study.write_text(BROKEN, encoding="utf-8")
    return study


@pytest.fixture
def telegram_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setenv(TOKEN_ENV, "123:abc")
    monkeypatch.setenv(SECRET_ENV, SECRET)
    yield monkeypatch


def test_every_kind_of_error_has_its_own_exit_status() -> None:
    kinds = [OzlabError, *OzlabError.__subclasses__(), *StoreError.__subclasses__()]
    # a narrower kind that keeps its parent's status (an unreadable stored definition is a
    # database that cannot be used) is the same cause, said more precisely
    codes = [kind.exit_code for kind in kinds if "exit_code" in vars(kind)]
    assert len(set(codes)) == len(codes) and 0 not in codes


def test_a_broken_study_file_exits_10_with_file_line_and_field(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = ozlab(capsys, "check", broken)
    assert code == StudyFileError.exit_code == 10
    assert lines[0] == f"{broken}:10: scenarios[1]: no scenario 'missing': neither " + (
        f"{broken.parent / 'scenarios' / 'missing.yaml'} nor the shipped "
        "scenarios/library/scenarios/missing.yaml exists"
    )
    assert lines[1:] == ["1 problem found."]


@pytest.mark.parametrize("command", [["run"], ["demo", "--study"]])
def test_run_and_demo_refuse_a_broken_study_as_check_does(
    telegram_env: pytest.MonkeyPatch,
    broken: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    checked = ozlab(capsys, "check", broken)
    code, lines = ozlab(capsys, *command, broken, "--db", broken.parent / "x.sqlite")
    assert (code, lines) == checked
    assert not (broken.parent / "x.sqlite").exists()


def test_an_unknown_study_name_lists_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = ozlab(capsys, "check", "no-such-study")
    assert code == 10
    assert lines[0].startswith("no-such-study: no study file 'no-such-study' and no shipped")
    assert "hmd" in lines[0]


def test_a_starter_over_existing_files_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", str(tmp_path / "pilot")]) == 0
    capsys.readouterr()
    code, lines = ozlab(capsys, "new", tmp_path / "pilot")
    assert code == StudyDataError.exit_code == 3
    assert len(lines) == 1 and lines[0].startswith("ozlab: not overwriting what is already there")


def test_a_short_secret_exits_3_before_anything_starts(
    telegram_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    telegram_env.setenv(SECRET_ENV, "short")
    code, lines = ozlab(capsys, "run", "hmd", "--db", tmp_path / "x.sqlite")
    assert code == 3
    assert len(lines) == 1 and lines[0].startswith(f"ozlab: set {SECRET_ENV} to a long random")
    assert not (tmp_path / "x.sqlite").exists()


def test_no_bot_token_exits_7(
    telegram_env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    telegram_env.delenv(TOKEN_ENV)
    code, lines = ozlab(capsys, "run", "hmd", "--db", tmp_path / "x.sqlite")
    assert code == TelegramSetupError.exit_code == 7
    assert lines == [f"ozlab: set {TOKEN_ENV} to the token @BotFather gave you"]


def test_a_demo_server_on_a_taken_port_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, lines = ozlab(capsys, "serve-demo", "--port", str(port))
    assert code == SystemSetupError.exit_code == 4
    assert len(lines) == 1
    assert lines[0].startswith(f"ozlab: the demo shop cannot listen on 127.0.0.1:{port}: ")


def test_a_system_that_cannot_be_built_stops_run_with_4(tmp_path: Path) -> None:
    """As a researcher runs it (a subprocess: ``run`` sets up logging for the process)."""
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    text = study.read_text(encoding="utf-8")
    demo = "  - type: demo\n    id: shop-v0\n    variant: v0\n"
    assert demo in text
    study.write_text(
        text.replace(demo, "  - type: python\n    id: mine\n    entry: ozt_nowhere:Thing\n"),
        encoding="utf-8",
    )
    env = {**os.environ, TOKEN_ENV: "123:abc", SECRET_ENV: SECRET}
    db, nowhere = str(tmp_path / "x.sqlite"), "http://127.0.0.1:9"
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "run", str(study), "--db", db, "--bot-api-url", nowhere],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == SystemSetupError.exit_code == 4, done.stderr
    assert done.stderr.splitlines() == [
        "ozlab: system 'mine': cannot import 'ozt_nowhere:Thing': there is no module"
        " 'ozt_nowhere' (is it installed, or on PYTHONPATH?)"
    ]


def test_a_file_that_is_not_a_study_database_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thesis = tmp_path / "thesis.sqlite"
    thesis.write_text("my thesis", encoding="utf-8")
    code, lines = ozlab(capsys, "report", "--db", thesis)
    assert code == StoreError.exit_code == 5
    assert len(lines) == 1 and lines[0].startswith(f"ozlab: {thesis} ")
    # demo sets up logging for the process: a process of its own
    demo = [sys.executable, "-m", "bot.cli", "demo", "-n", "1", "--db", str(thesis)]
    done = subprocess.run(demo, capture_output=True, text=True, timeout=60)
    assert done.returncode == 5, done.stderr
    assert done.stderr.splitlines() == [
        f"ozlab: {thesis} exists and is not an ozlab database; choose another --db"
    ]
    assert thesis.read_text(encoding="utf-8") == "my thesis"


def test_a_database_of_a_newer_ozlab_exits_6(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newer = tmp_path / "newer.sqlite"
    stamp_schema_version(newer, 999)
    code, lines = ozlab(capsys, "report", "--db", newer)
    assert code == SchemaError.exit_code == 6
    assert len(lines) == 1 and lines[0].startswith(f"ozlab: {newer} has schema version 999")


def test_chat_ids_sealed_under_another_secret_are_a_store_error() -> None:
    """What ``ozlab run`` meets when restarted with another secret: exit 5, not a crash."""
    sealed = Privacy(SECRET).seal("12345")
    with pytest.raises(StoreError, match=f"sealed with another {SECRET_ENV}") as caught:
        Privacy("t" * 32).unseal(sealed)
    assert caught.value.exit_code == 5
