"""Text from outside ozlab reaches a researcher's terminal as text: a participant's or a
system's escape sequences, bidi overrides and Rich markup show as what they are, in the
wizard console, ``ozlab wizard`` commands, ``ozlab chat``, ``ozlab stress judge``, the
terminal report and log lines, and never act on the terminal."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest
from textual.widgets import Label, Static

from bot.cli import main
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source
from bot.core.visible_text import visible
from bot.core.vocabulary import AnswerStatus, Moment
from bot.desk.desk import Desk
from bot.engine import effects as fx
from bot.pilot.chat_screen import Seen, news, notice
from bot.pilot.emulator import BotApiEmulator
from bot.runtime.logging import setup_logging
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from bot.store.stress_records import Replay, ReplyTaken, Review
from bot.stress.replay.judges import judge_at_terminal
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent
from tests.report_study import report_bundle, write_report_study
from tests.store_contract.records import session, step
from tests.test_wizard_app import app_of, console, shows
from tests.test_wizard_desk import woz
from wizard_console.app import WizardApp
from wizard_console.screens import PromptScreen
from wizard_console.stress_screen import StressJudgeScreen
from wizard_console.widgets import TranscriptView

EVIL = (
    "\x1b[2J\x1b]0;TITLE\x07[/x] [bold]b[/bold] [link=http://evil.example]l[/link] \u202eevil\x7f"
)
SHOWN = (
    "\\x1b[2J\\x1b]0;TITLE\\x07[/x] [bold]b[/bold] [link=http://evil.example]l[/link]"
    " \\u202eevil\\x7f"
)
OBEYED = ("\x1b", "\x07", "\u202e", "\x7f")
"""What a terminal would act on: none of it may reach one."""


def obeyed(text: str) -> list[str]:
    return [char for char in OBEYED if char in text]


def joined(text: str) -> str:
    """Wrapped and padded text as one word, to find a long line wherever it wrapped."""
    return "".join(text.split())


def test_every_control_character_shows_as_its_escape() -> None:
    assert visible(EVIL) == SHOWN
    assert visible("one\ntwo\r\nthree\tfour\x85\u2028\ud800") == (
        "one\\ntwo\\r\\nthree\\tfour\\x85\\u2028\\ud800"
    )
    assert visible("one\ntwo\r\nthree\rfour", lines=True) == "one\ntwo\nthree\\rfour"
    plain = "Grüße, שלום \u200f, 🙂, C:\\Users\\ada"
    assert visible(plain) is plain  # nothing to escape: the same string, nothing copied


async def test_the_console_shows_a_participants_escapes_and_brackets_as_text(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bot = await start_bot(woz(hmd), command_interval=0.05)
    p = emulator.participant(840)
    await consent(p)
    await p.send_text(EVIL)
    async with console(bot.db) as pilot:
        app = app_of(pilot)
        session = await shows(pilot, lambda: app.selected)
        await shows(pilot, lambda: session in app.waiting)
        view = pilot.app.query_one(TranscriptView)
        await shows(pilot, lambda: "TITLE" in "".join(strip.text for strip in view.lines))
        drawn = "".join(strip.text for strip in view.lines)
        assert joined(SHOWN) in joined(drawn) and obeyed(drawn) == []
        await pilot.press("r")  # reply in the system's place: the prompt quotes the message
        assert isinstance(app.screen, PromptScreen)
        title = str(app.screen.query_one("#prompt-title", Label).render())
        assert SHOWN[:30] in title and obeyed(title) == []
        await pilot.press("escape")
    for action in (["transcript", session], ["waiting"]):  # the plain commands run a loop
        assert await asyncio.to_thread(main, ["wizard", "--db", str(bot.db), *action]) == 0
    out = capsys.readouterr().out
    assert out.count(SHOWN) == 2 and obeyed(out) == []


async def stress_store(tmp_path: Path) -> list[int]:
    """One logged utterance and its replay, every text of them a participant's or a system's."""
    store = await open_store(tmp_path / "study.sqlite")
    try:
        turns = (fx.RecordUserTurn("p-1", 1, EVIL), fx.RecordSystemTurn("p-1", 1, EVIL, 3.0))
        await store.commit_step(step("p", *session("p"), *turns))
        test = Perturbation("p-1", 1, StressType.ST_4, EVIL, EVIL + "!", Source.GENERATED)
        ids = await store.add_stress_tests([test], Review.ACCEPTED)
        await store.record_replay(
            Replay(ids[0], "sys", 1.0, 2.0, ReplyTaken((EVIL,)), ReplyTaken(error=EVIL), True)
        )
        return ids
    finally:
        await store.close()


async def test_stress_judge_shows_the_replays_as_text(tmp_path: Path) -> None:
    await stress_store(tmp_path)
    store = await open_store(tmp_path / "study.sqlite")
    out = io.StringIO()
    try:
        await judge_at_terminal(store, "ann", lambda: "q\n", out)
    finally:
        await store.close()
    shown = out.getvalue()
    assert f"original : {SHOWN}" in shown and obeyed(shown) == []
    rows = [line[2:-2].split(" | ") for line in shown.splitlines() if line.startswith("| ")]
    unchanged, perturbed = ("".join(column) for column in zip(*rows[1:], strict=True))
    assert joined(SHOWN) == joined(unchanged)
    assert joined(f"(the system failed: {SHOWN})") == joined(perturbed)


async def test_the_consoles_stress_screen_shows_the_replays_as_text(tmp_path: Path) -> None:
    await stress_store(tmp_path)
    async with await Desk.open(tmp_path / "study.sqlite", "ada") as desk:
        app = WizardApp(desk, interval=0.1)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("v")
            screen = app.screen
            assert isinstance(screen, StressJudgeScreen)
            await shows(pilot, lambda: screen.todo)
            await pilot.pause()
            for part in ("#stress-test", "#stress-unchanged", "#stress-perturbed"):
                shown = str(screen.query_one(part, Static).render())
                assert "[/x]" in shown and "[link=http://evil.example]" in shown, part
                assert obeyed(shown) == [], part


def test_ozlab_chat_shows_a_systems_escapes_as_text() -> None:
    reply = Seen(13, f"{EVIL}\nsecond line {EVIL}", ((("\x1b[31mred", "x"),),))
    lines = news({}, [reply])
    assert lines == [
        f"bot #1: {SHOWN}",
        f"    second line {SHOWN}",
        "    [1] \\x1b[31mred",
    ]
    assert notice(EVIL) == f"bot (notice): {SHOWN}"


async def test_the_terminal_report_shows_a_comment_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "study.sqlite"
    await write_report_study(db)
    store = await open_store(db)
    try:
        comment = fx.RecordResponse(
            "a01-order", "post", "post.comment", None, None, EVIL, AnswerStatus.ANSWERED, 0.0,
            Moment.POST_TASK,
        )  # fmt: skip
        await store.commit_step(
            StepCommit(report_bundle().study.id, "a01", "{}", None, "sealed", (comment,))
        )
    finally:
        await store.close()
    assert main(["report", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert joined(SHOWN) in joined(out) and obeyed(out) == []


def test_a_log_line_shows_escapes_and_stays_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    try:
        setup_logging(logging.INFO, ["s3cret-token"])
        logging.getLogger("ozlab.test").warning("participant wrote %s\nFAKE LINE", EVIL)
        try:
            raise ValueError(EVIL)
        except ValueError:
            logging.getLogger("ozlab.test").exception("system failed")
    finally:
        root.handlers[:], _ = kept
        root.setLevel(kept[1])
    err = capsys.readouterr().err
    first, *traceback = err.splitlines()
    assert first.endswith(f"participant wrote {SHOWN}\\nFAKE LINE")
    assert traceback[-1] == f"ValueError: {SHOWN}"
    assert obeyed(err) == []
