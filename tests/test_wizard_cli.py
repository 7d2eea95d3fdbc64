"""``ozlab wizard ...`` as plain commands, the way a script or a remote shell uses them."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import subprocess
import sys
from pathlib import Path

from bot.cli import main, parser
from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent, say
from tests.storage_probe import command_log
from tests.store_reads import pick
from tests.test_wizard_desk import shop, until, woz


def parse(*argv: str) -> argparse.Namespace:
    """As ``ozlab`` parses: ``ozlab wizard ...``."""
    return parser().parse_args(["wizard", *argv])


async def ozlab_wizard(db: Path, *argv: str, wizard: str = "ada") -> tuple[int, str]:
    """Run a plain command in a thread (it waits for the bot, which runs in this loop);
    returns the exit code and what it printed (stdout and stderr)."""

    def run() -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(["wizard", argv[0], "--db", str(db), "--as", wizard, *argv[1:]])
        return code, out.getvalue()

    return await asyncio.to_thread(run)


def test_db_and_as_go_before_or_after_the_action() -> None:
    before = parse("--db", "a.sqlite", "--as", "ada", "say", "s-1", "hi")
    after = parse("say", "s-1", "hi", "--db", "a.sqlite", "--as", "ada")
    for args in (before, after):
        assert (args.db, args.wizard, args.action, args.text) == (
            "a.sqlite",
            "ada",
            "say",
            "hi",
        )
    console = parse()
    assert (console.action, console.db, console.wizard) == (None, "ozlab.sqlite", None)


def test_the_bot_and_the_plain_commands_never_import_textual() -> None:
    code = (
        "import sys, bot.cli, bot.cli.wizard, wizard_console.commands;"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'textual'], 'textual'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


async def test_every_action_as_a_plain_command(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(951)
    await consent(p)
    await say(p, "adventure games for Linux")
    code, out = await ozlab_wizard(bot.db, "sessions")
    [line] = out.splitlines()
    session = line.split()[0]
    assert code == 0 and " dialogue study=hmd scenario=hmd-gift system=shop-v1" in line
    assert "exchanges=1/10" in line
    assert await ozlab_wizard(bot.db, "say", session, "Hello") == (
        0,
        f"#1 say {session}: applied\n",
    )
    await p.wait_for_text("Hello")
    for argv in (("success", session), ("fail", session), ("note", session, "nice")):
        code, out = await ozlab_wizard(bot.db, *argv)
        assert code == 0 and out.endswith("applied\n"), out
    code, out = await ozlab_wizard(bot.db, "gate", session, "on")
    assert code == 0
    await p.send_text("tell me about 2")
    async with await Desk.open(bot.db, "x") as desk:
        await until(desk.waiting_replies)
    code, out = await ozlab_wizard(bot.db, "waiting")
    assert out.startswith(f"{session} turn=2") and "participant: tell me about 2" in out
    code, out = await ozlab_wizard(bot.db, "reply", session, "--edit", "Number 2 is great")
    assert code == 0
    await p.wait_for_text("Number 2 is great")
    code, out = await ozlab_wizard(bot.db, "transcript", session)
    assert "edited·ada" in out and "(the system said:" in out and "note·ada" in out
    code, out = await ozlab_wizard(bot.db, "end", session, "--reason", "demo over")
    assert code == 0
    await p.wait_for_text("This task is over.")
    code, out = await ozlab_wizard(bot.db, "say", session, "still there?")
    assert code == 9 and "expired" in out
    code, out = await ozlab_wizard(bot.db, "start", session)  # not held: nothing to start
    assert code == 9 and "expired" in out
    assert {c["wizard"] for c in command_log(bot.db)} == {"ada"}


async def test_mistakes_and_a_missing_bot_get_their_own_exit_codes(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, tmp_path: Path
) -> None:
    code, out = await ozlab_wizard(tmp_path / "none.sqlite", "sessions")
    assert code == 5 and "no study database" in out  # a StoreError
    bot = await start_bot(woz(hmd))
    p = emulator.participant(952)
    await consent(p)
    code, out = await ozlab_wizard(bot.db, "say", "p000-1", "hi")
    assert code == 3 and "no session 'p000-1'" in out  # a StudyDataError
    code, out = await ozlab_wizard(bot.db, "sessions", "--state", "dialogue")
    session = out.split()[0]
    await bot.stop()
    code, out = await ozlab_wizard(bot.db, "pause", session, "--wait", "0.1")
    assert code == 8 and "it will when it runs" in out
    code, out = await ozlab_wizard(bot.db, "gate", "system:woz", "on", "--wait", "0")
    assert code == 0 and out == "#2 gate system:woz on: written\n"
    assert pick(command_log(bot.db), "kind", "session_id", "outcome") == [
        ("pause", session, None),
        ("gate", None, None),
    ]
