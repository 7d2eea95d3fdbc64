"""The one table of exit statuses: no two causes share a number, the guide
(docs/exit-statuses.md) and ``ozlab --help`` show the same table, and each status is what a
real command ends with.

A study file's mistake used to end with argparse's 2, and a wizard's command the bot
rejected with a crash's 1: a script could not tell them apart."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.core import errors
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle
from tests.command_line import interrupted_demo, ozlab
from tests.conftest import TOKEN, StartBot, consent, say
from tests.storage_probe import stamp_schema_version
from tests.test_cli_errors import BROKEN
from tests.test_wizard_desk import shop

pytestmark = pytest.mark.slow  # whole commands in subprocesses: make test, not make check

ROOT = Path(__file__).resolve().parents[1]


def test_no_two_causes_share_a_status() -> None:
    codes = [code for code, _ in errors.EXIT_STATUSES]
    assert len(codes) == len(set(codes)), codes
    assert errors.USAGE == 2 and errors.CRASH == 1 and errors.INTERRUPTED == 130
    raised = {
        cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.OzlabError) and cls.exit_code > 1
    }
    assert raised <= set(codes) and not raised & {errors.CRASH, errors.USAGE}


def test_the_guide_and_the_help_show_the_one_table() -> None:
    readme = (ROOT / "docs" / "exit-statuses.md").read_text(encoding="utf-8")
    documented = [int(n) for n in re.findall(r"^\| (\d+) \| ", readme, flags=re.MULTILINE)]
    assert documented == [code for code, _ in errors.EXIT_STATUSES]
    shown = ozlab("--help", cwd=ROOT)
    assert shown.returncode == 0
    epilog = shown.stdout[shown.stdout.index("exit statuses:") :]
    listed = [int(n) for n in re.findall(r"^ {2}\s*(\d+)  ", epilog, flags=re.MULTILINE)]
    assert listed == [code for code, _ in errors.EXIT_STATUSES]


def test_done_is_0(tmp_path: Path) -> None:
    done = ozlab("schema", "--out", tmp_path / "schemas", cwd=tmp_path)
    assert done.returncode == errors.DONE == 0, done.stderr


def test_a_wrong_argument_is_argparses_2(tmp_path: Path) -> None:
    done = ozlab("demo", "-n", "0", "--db", tmp_path / "d.sqlite", cwd=tmp_path)
    assert done.returncode == errors.USAGE == 2
    assert done.stderr.splitlines()[-1] == (
        "ozlab demo: error: argument -n/--participants: must be 1 or more, not 0"
    )


def test_a_wrong_value_is_3(tmp_path: Path) -> None:
    done = ozlab("erase", "--db", tmp_path / "study.sqlite", cwd=tmp_path)
    assert done.returncode == errors.StudyDataError.exit_code == 3
    assert done.stderr == (
        "ozlab: name a pseudonym, --telegram-id, --expired, --chat-keys or --backups\n"
    )


def test_a_system_that_cannot_be_built_is_4(tmp_path: Path) -> None:
    done = ozlab("pilot", "hmd", "--db", tmp_path / "p.sqlite", cwd=tmp_path)
    assert done.returncode == errors.SystemSetupError.exit_code == 4
    assert done.stderr.startswith("ozlab: --simulator openai needs --simulator-url")


def test_a_database_that_cannot_be_used_is_5(tmp_path: Path) -> None:
    done = ozlab("backup", "--db", tmp_path / "none.sqlite", "--out", "b.sqlite", cwd=tmp_path)
    assert done.returncode == errors.StoreError.exit_code == 5
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_database_of_another_ozlab_is_6(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    stamp_schema_version(newer, 999)
    done = ozlab("wizard", "sessions", "--db", newer, cwd=tmp_path)
    assert done.returncode == errors.SchemaError.exit_code == 6
    assert done.stderr.startswith(f"ozlab: {newer} has schema version 999"), done.stderr


def test_no_token_is_7(tmp_path: Path) -> None:
    done = ozlab("run", "hmd", "--db", tmp_path / "study.sqlite", cwd=tmp_path)
    assert done.returncode == errors.TelegramSetupError.exit_code == 7
    assert done.stderr.startswith("ozlab: set TELEGRAM_BOT_TOKEN")


def test_a_study_file_mistake_is_10_not_a_usage_error(tmp_path: Path) -> None:
    study = tmp_path / "broken.yaml"
    study.write_text(BROKEN, encoding="utf-8")
    done = ozlab("check", study, cwd=tmp_path)
    assert done.returncode == errors.StudyFileError.exit_code == 10
    assert done.stderr.startswith(f"{study}:"), done.stderr


@pytest.mark.slow
def test_a_wizard_command_no_bot_applies_in_time_is_8(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    assert ozlab("demo", "-n", "1", "--annotators", "0", "--db", db, cwd=tmp_path).returncode == 0
    listed = ozlab("wizard", "sessions", "--all", "--db", db, cwd=tmp_path)
    session = listed.stdout.split()[0]
    done = ozlab("wizard", "pause", session, "--wait", "0.1", "--db", db, cwd=tmp_path)
    assert done.returncode == errors.NOT_YET == 8, done.stderr
    assert "it will when it runs" in done.stdout


@pytest.mark.slow
async def test_a_wizard_command_the_bot_refuses_is_9_not_a_crash(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(953)
    await consent(p)
    await say(p, "adventure games for Linux")

    def wizard(*argv: str) -> int:
        return main(["wizard", *argv, "--db", str(bot.db), "--as", "ada"])

    listed = await asyncio.to_thread(ozlab, "wizard", "sessions", "--db", bot.db, cwd=bot.db.parent)
    session = listed.stdout.split()[0]
    # Not held: there is nothing to start, and the bot says so.
    assert await asyncio.to_thread(wizard, "start", session) == errors.NOT_APPLIED == 9


@pytest.mark.slow
async def test_a_crash_is_1(tmp_path: Path) -> None:
    from tests.e2e_support import OzlabProcesses
    from tests.test_run_exit_e2e import NotAnApi

    async with NotAnApi(TOKEN) as emulator:
        processes = OzlabProcesses(emulator, tmp_path)
        try:
            bot = await processes.start(wait_ready=False)
            code = await asyncio.wait_for(bot.finish(), 30)
        finally:
            await processes.close()
    assert code == errors.CRASH == 1
    assert "Traceback (most recent call last)" in bot.stderr


@pytest.mark.slow
async def test_ctrl_c_is_130(tmp_path: Path) -> None:
    status, _, err = await interrupted_demo(tmp_path)
    assert status == errors.INTERRUPTED == 130
    assert err.splitlines() == ["ozlab: stopped by Ctrl-C"]
