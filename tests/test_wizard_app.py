"""The console through Textual's headless harness: an experimenter pressing keys at an
80×24 terminal, beside the real bot writing the database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select

from bot.desk.desk import Desk
from bot.desk.model import LiveSession
from bot.pilot.emulator import BotApiEmulator
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent, say
from tests.storage_probe import command_log
from tests.store_reads import pick
from tests.test_wizard_desk import shop, until
from wizard_console.app import WizardApp
from wizard_console.screens import FilterScreen, HelpScreen, PromptScreen
from wizard_console.widgets import SessionsTable, TranscriptView

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

SIZE = (80, 24)


@asynccontextmanager
async def console(db: Path, wizard: str = "ada", **options: Any) -> AsyncIterator[Pilot]:
    """The console on ``db``, polling fast so that tests wait less."""
    async with await Desk.open(db, wizard) as desk:
        app = WizardApp(desk, **({"interval": 0.1} | options))
        async with app.run_test(size=SIZE) as pilot:
            yield pilot


def app_of(pilot: Pilot) -> WizardApp:
    assert isinstance(pilot.app, WizardApp)
    return pilot.app


def status(pilot: Pilot) -> str:
    return str(pilot.app.query_one("#status").render())


def table(pilot: Pilot) -> SessionsTable:
    return pilot.app.query_one(SessionsTable)


def transcript(pilot: Pilot) -> list[str]:
    return [line.text for line in pilot.app.query_one(TranscriptView).shown]


async def shows(pilot: Pilot, check: Callable[[], Any], seconds: float = 10.0) -> Any:
    """Wait until the console shows something (it polls the database on its own)."""
    return await until(check, seconds)


def commands(db: Path) -> list[tuple[Any, ...]]:
    """Every command written, applied or not, as (kind, session, payload, wizard): the
    store reads commands only as pending ones and outcomes, so this is the storage probe."""
    return pick(command_log(db), "kind", "session_id", "payload", "wizard")


def assert_fits(pilot: Pilot) -> None:
    """What a snapshot would catch at 80×24: nothing drawn outside the screen, and no
    pane wider than its room (no horizontal scrolling)."""
    width, height = SIZE
    for widget in pilot.app.screen.walk_children():
        region = widget.region
        assert region.right <= width and region.bottom <= height, (widget, region)
    for pane in (table(pilot), pilot.app.query_one(TranscriptView)):
        assert pane.virtual_size.width <= pane.scrollable_content_region.width, pane


async def test_the_main_screen_fits_80x24_and_follows_the_participants(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd))
    talker, newcomer = emulator.participant(801), emulator.participant(802)
    await consent(talker)
    await newcomer.send_text("/start")
    async with console(bot.db, interval=0.25) as pilot:  # the console's own pace
        await shows(pilot, lambda: len(table(pilot).shown) == 2)
        assert_fits(pilot)
        footer = " ".join(str(key.render()) for key in pilot.app.query("FooterKey"))
        assert "? Help" in footer and "q Quit" in footer
        await shows(pilot, lambda: app_of(pilot).selected is not None)
        await pilot.press("down", "up")  # the talker arrived first: the first row
        session = app_of(pilot).selected
        assert session is not None and app_of(pilot).current().state == "dialogue"  # type: ignore[union-attr]
        sent = asyncio.get_running_loop().time()
        await talker.send_text("adventure games for Linux")
        await shows(pilot, lambda: "adventure games for Linux" in transcript(pilot), 1.0)
        latency = asyncio.get_running_loop().time() - sent
        assert latency < 1.0  # a new message shows within a second
        await shows(pilot, lambda: any("Linux:" in t for t in transcript(pilot)))
        bar = str(pilot.app.query_one("#bar").render())
        assert "2 live" in bar and "ada" in bar
        assert_fits(pilot)


async def test_the_help_screen_lists_every_key(tmp_path: Path) -> None:
    db = await empty_database(tmp_path)
    async with console(db) as pilot:
        await pilot.press("question_mark")
        assert isinstance(pilot.app.screen, HelpScreen)
        shown = " ".join(str(w.render()) for w in pilot.app.screen.query("Static"))
        for binding in WizardApp.BINDINGS:
            assert f"{binding.key_display or binding.key}  " in shown  # type: ignore[union-attr]
        assert "W reply waiting" in shown
        for widget in pilot.app.screen.walk_children():
            assert widget.region.right <= SIZE[0] and widget.region.bottom <= SIZE[1]
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, HelpScreen)
        await pilot.press("w")  # nothing selected: said so, nothing written
        assert "select a session first" in status(pilot)
        assert commands(db) == []


async def test_keys_write_commands_and_show_what_the_bot_made_of_them(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(803)
    await consent(p)
    await say(p, "adventure games for Linux")
    async with console(bot.db, "grace") as pilot:
        app = app_of(pilot)
        session = await shows(pilot, lambda: app.selected)
        await pilot.press("w")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"Hi, lab", "enter")
        await p.wait_for_text("Hi, lab")
        await shows(pilot, lambda: "say: applied" in status(pilot))
        await shows(pilot, lambda: "Hi, lab" in transcript(pilot))
        await pilot.press("s")
        await shows(pilot, lambda: "success: applied" in status(pilot))
        await pilot.press("p")
        await p.wait_for_text("paused")
        await shows(pilot, lambda: "P" in app.current().flags)  # type: ignore[union-attr]
        await pilot.press("p")
        await p.wait_for_text("continue now")
        await pilot.press("left_square_bracket", "n")  # the only turn: a note on turn 1
        await pilot.press(*"good", "enter")
        await shows(pilot, lambda: "note: applied" in status(pilot))
        await pilot.press("d", *"late", "enter")
        await p.wait_for_text("This task is over.")
        await shows(pilot, lambda: "end: applied" in status(pilot))
        await pilot.press("a")  # nothing waits: said so
        assert "no reply is waiting" in status(pilot)
        await pilot.press("t")
        assert "only a held session" in status(pilot)
    assert commands(bot.db) == [
        ("say", session, {"text": "Hi, lab"}, "grace"),
        ("success", session, {}, "grace"),
        ("pause", session, {}, "grace"),
        ("resume", session, {}, "grace"),
        ("note", session, {"turn": 1, "text": "good"}, "grace"),
        ("end", session, {"reason": "late"}, "grace"),
    ]


async def test_filters_and_ended_sessions(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(hmd, command_interval=0.05)  # both shop systems
    people = [emulator.participant(810 + i) for i in range(4)]
    for p in people:
        await consent(p)
    async with await Desk.open(bot.db, "ada") as desk:

        async def four() -> list[LiveSession] | None:
            found = await desk.live_sessions()
            return found if len(found) == 4 else None

        live = await until(four)
        ended = live[0].session_id
        command_id = await desk.command("end", ended, reason="x")
        assert await until(lambda: desk.outcome(command_id)) == "applied"
    systems = {s.session_id: s.system for s in live}
    async with console(bot.db) as pilot:
        app = app_of(pilot)
        await shows(pilot, lambda: len(table(pilot).shown) == 4)
        app.filters = type(app.filters)(state="dialogue")
        assert ended not in table(pilot).shown and len(table(pilot).shown) == 3
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press("ctrl+r")  # reset: everything again
        assert len(table(pilot).shown) == 4
        await pilot.press("f", "tab", "enter", "down", "enter", "ctrl+s")  # the first system
        first_system = sorted(set(systems.values()))[0]
        assert app.filters.system == first_system and app.filters.state is None
        assert set(table(pilot).shown) == {k for k, v in systems.items() if v == first_system}
        await pilot.press("f")
        assert pilot.app.screen.query_one("#filter-system", Select).value == first_system
        await pilot.press("ctrl+r")
        await pilot.press("h")  # ended questionnaire sessions are live; ended ones appear
        await shows(pilot, lambda: "ended shown" in str(pilot.app.query_one("#bar").render()))
        await pilot.press("h")
        await shows(pilot, lambda: "ended hidden" in str(pilot.app.query_one("#bar").render()))
        assert_fits(pilot)


async def test_a_command_while_the_bot_is_down_waits_for_it(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd))
    p = emulator.participant(820)
    await consent(p)
    await bot.stop()
    async with console(bot.db, slow_bot=0.2) as pilot:
        await shows(pilot, lambda: app_of(pilot).selected)
        await pilot.press("x")
        await shows(pilot, lambda: "failure: waiting for the bot" in status(pilot))
    assert [row[0] for row in commands(bot.db)] == ["fail"]
    assert pick(command_log(bot.db), "outcome") == [(None,)]


async def test_a_gate_with_auto_send_from_the_gate_screen(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(830)
    await consent(p)
    async with console(bot.db) as pilot:
        app = app_of(pilot)
        session = await shows(pilot, lambda: app.selected)
        await pilot.press("g", "2")  # the session's system
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one(Input).value == ""
        await pilot.press(*"12.5", "enter")
        await shows(pilot, lambda: "gate system:shop-v1: applied" in status(pilot))
        await shows(pilot, lambda: "G" in app.current().flags)  # type: ignore[union-attr]
        await pilot.press("g", "2")  # gated: ungates at once
        await shows(pilot, lambda: "ungate system:shop-v1: applied" in status(pilot))
        await pilot.press("g", "escape")
    assert [(k, s, p) for k, s, p, _ in commands(bot.db)] == [
        ("gate", None, {"scope": "system:shop-v1", "on": True, "auto_send_after": 12.5}),
        ("gate", None, {"scope": "system:shop-v1", "on": False, "auto_send_after": None}),
    ]
    assert session is not None


async def empty_database(tmp_path: Path) -> Path:
    """A study database with the current schema and nobody in it yet."""
    db = tmp_path / "empty.sqlite"
    store = await open_store(db, lambda: 0.0)
    await store.close()
    return db
