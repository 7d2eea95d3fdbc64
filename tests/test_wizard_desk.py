"""The experimenter's desk against databases written by the real bot (emulator, loopback)."""

from __future__ import annotations

import asyncio
import getpass
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.core.errors import SchemaError, StoreError
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    Consent,
    EndReason,
    EventKind,
    GateLevel,
    GateScope,
    ReplySource,
    Stage,
)
from bot.desk import Desk, DeskError
from bot.desk import formatting as fmt
from bot.desk.model import ENDED_STATES, ERROR, GATED, SILENT, WAITING
from bot.desk.sessions import _STATE_OF_STAGE
from bot.engine import effects as fx
from bot.pilot.emulator import BotApiEmulator
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle, Timing
from scenarios.systems import WizardSystem
from tests.conftest import StartBot, consent, say
from tests.e2e_support import only_system, settle
from tests.storage_probe import checkpoint_blocked, command_log, stamp_schema_version
from tests.store_reads import pick

T = TypeVar("T")


async def until(check: Callable[[], T | Awaitable[T]], seconds: float = 10.0) -> T:
    """Wait for a row the bot commits: the store does not notify other processes, so it
    is polled, with a deadline. ``check`` may be a coroutine function (a desk's read)."""

    async def value() -> T:
        found = check()
        return await found if inspect.isawaitable(found) else found

    async with asyncio.timeout(seconds):
        while not (found := await value()):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return found


async def act(desk: Desk, kind: str, session_id: str | None = None, **payload: Any) -> str:
    """Append a command and wait for its outcome."""
    command_id = await desk.command(kind, session_id, **payload)
    return await until(lambda: desk.outcome(command_id))


def shop(bundle: StudyBundle) -> StudyBundle:
    return only_system(bundle, "shop-v1")


def woz(bundle: StudyBundle, **study: Any) -> StudyBundle:
    """The study with one system of type wizard: every reply comes from the console."""
    updated = bundle.study.model_copy(
        update={"systems": (WizardSystem(type="wizard", id="woz"),), **study}
    )
    return bundle.model_copy(update={"study": updated})


async def session_of(desk: Desk, state: str = "dialogue") -> str | None:
    """The one session in ``state``; None while there is none."""
    found = [s.session_id for s in await desk.live_sessions() if s.state == state]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.fixture
async def open_desk() -> AsyncIterator[Callable[..., Awaitable[Desk]]]:
    opened: list[Desk] = []

    async def make(db: Path, wizard: str = "ada", **options: Any) -> Desk:
        opened.append(await Desk.open(db, wizard, **options))
        return opened[-1]

    yield make
    for desk in opened:
        await desk.close()


async def two(desk: Desk) -> list[Any] | None:
    found = await desk.live_sessions()
    return found if len(found) == 2 else None


async def alerted(desk: Desk, alert: str) -> list[Any]:
    return [s for s in await desk.live_sessions() if alert in s.alerts]


async def waiting(desk: Desk, n: int) -> list[Any] | None:
    found = await desk.waiting_replies()
    return found if len(found) == n else None


async def nothing_live(desk: Desk) -> bool:
    return await desk.live_sessions() == []


async def test_live_sessions_show_state_limits_and_who_said_what(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd))
    talker, newcomer = emulator.participant(701), emulator.participant(702)
    await consent(talker)
    await say(talker, "adventure games for Linux")
    await newcomer.send_text("/start")
    await newcomer.wait_for_text("Privacy agreement")
    desk = await open_desk(bot.db)
    rows = await until(lambda: two(desk))
    by_state = {s.state: s for s in rows}
    assert set(by_state) == {"dialogue", "consent"}
    talking = by_state["dialogue"]
    assert (talking.study, talking.scenario, talking.system) == ("hmd", "hmd-gift", "shop-v1")
    assert (talking.exchanges, talking.exchange_limit, talking.time_limit) == (1, 10, None)
    assert talking.elapsed is not None and 0 <= talking.elapsed < 30
    assert talking.since_last_message is not None and talking.since_last_message < 30
    assert talking.alerts == () and talking.system_type == "demo" and talking.turn == 1
    assert by_state["consent"].system is None and by_state["consent"].scenario is None
    assert [s.state for s in await desk.live_sessions(state="consent")] == ["consent"]
    assert [s.system for s in await desk.live_sessions(system="shop-v1")] == ["shop-v1"]
    assert await desk.live_sessions(study="other") == []
    lines = await desk.transcript(talking.session_id)
    assert [(line.who, line.turn) for line in lines] == [("participant", 1), ("system", 1)]
    assert lines[0].text == "adventure games for Linux" and "Linux" in lines[1].text
    assert await desk.transcript(talking.session_id, after=lines[0].at) == lines[1:]


async def test_a_command_carries_the_wizard_name_and_its_outcome(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(703)
    await consent(p)
    desk = await open_desk(bot.db, "grace")
    session = await until(lambda: session_of(desk))
    assert await act(desk, "say", session, text="Hello, I am here to help.") == "applied"
    await p.wait_for_text("Hello, I am here to help.")
    assert pick(command_log(bot.db), "wizard", "kind", "session_id", "outcome") == [
        ("grace", "say", session, "applied")
    ]
    [line] = [line for line in await desk.transcript(session) if line.who == "wizard"]
    assert (line.text, line.wizard) == ("Hello, I am here to help.", "grace")
    assert await act(desk, "note", session, turn=0, text="greeted early") == "applied"
    assert await act(desk, "success", session) == "applied"
    notes = [(x.who, x.text, x.wizard) for x in await desk.transcript(session) if x.who == "note"]
    assert notes == [("note", "greeted early", "grace")]
    assert pick(bot.sessions(), "success") == [(1,)]
    assert await act(desk, "end", session, reason="enough for today") == "applied"
    await p.wait_for_text("This task is over.")
    ended = (await desk.transcript(session))[-2:]
    assert [x.who for x in ended] == ["end", "end"] and "enough for today" in ended[0].text
    assert "wizard" in ended[1].text  # the session's end reason
    assert await act(desk, "say", session, text="too late") == "expired"
    assert (await desk.live_sessions())[0].state == "questionnaire"


async def test_alerts_a_failing_system_a_silent_participant_and_a_waiting_reply(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    class Broken:
        async def respond(self, conversation: Conversation) -> SystemReply:
            raise RuntimeError("model server down")

        async def close(self) -> None:
            """Nothing to release."""

    study = hmd.study.model_copy(update={"timing": Timing(reminder_after=0.3, abandon_after=60)})
    bundle = shop(hmd.model_copy(update={"study": study}))
    bot = await start_bot(bundle, systems={"shop-v1": Broken()})
    p = emulator.participant(704)
    await consent(p)
    await say(p, "hello?")
    desk = await open_desk(bot.db)
    failing = await until(lambda: alerted(desk, ERROR))
    assert "model server down" in (failing[0].error or "")
    await p.wait_for_text("Are you still there?")
    silent = await until(lambda: alerted(desk, SILENT))
    assert silent[0].session_id == failing[0].session_id
    errors = [x for x in await desk.transcript(failing[0].session_id) if x.who == "error"]
    assert errors and "model server down" in errors[0].text


async def test_the_shared_queue_of_a_wizard_type_system(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(woz(hmd), command_interval=0.05)
    first, second = emulator.participant(705), emulator.participant(706)
    for p in (first, second):
        await consent(p)
    await first.send_text("Is anybody there?")
    await second.send_text("Hello!")
    desk = await open_desk(bot.db)
    queue = await until(lambda: waiting(desk, 2))
    assert [w.message for w in queue] == ["Is anybody there?", "Hello!"]  # oldest first
    assert queue[0].proposed == () and queue[0].system == "woz" and queue[0].turn == 1
    row = next(s for s in await desk.live_sessions() if s.session_id == queue[0].session_id)
    assert WAITING in row.alerts and row.system_type == "wizard" and GATED not in row.alerts
    outcome = await act(desk, "reply", queue[0].session_id, action="replace", text="I am.")
    assert outcome == "applied"
    await first.wait_for_text("I am.")
    assert [w.message for w in await desk.waiting_replies()] == ["Hello!"]


async def test_gates_of_a_session_a_system_and_the_study(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(707)
    await consent(p)
    desk = await open_desk(bot.db)
    session = await until(lambda: session_of(desk))
    for scope in ("system:shop-v1", "study:hmd", f"session:{session}"):
        command_id = await desk.gate(scope, True, 30)
        assert await until(lambda i=command_id: desk.outcome(i)) == "applied"
        assert GATED in (await desk.live_sessions())[0].alerts
        assert (await desk.live_sessions())[0].own_gate == scope.startswith("session:")
        command_id = await desk.gate(scope, False)
        assert await until(lambda i=command_id: desk.outcome(i)) == "applied"
        assert GATED not in (await desk.live_sessions())[0].alerts
    gates = await desk.gates()
    study, system = GateScope(GateLevel.STUDY, "hmd"), GateScope(GateLevel.SYSTEM, "shop-v1")
    assert gates[study].wizard == "ada" and not gates[study].gated
    assert gates[system].auto_send_after is None
    bad = await desk.gate("system:nope", True)
    assert await until(lambda: desk.outcome(bad)) == "rejected"


async def test_ended_and_past_sessions_are_shown_only_when_asked(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd), command_interval=0.05)
    p = emulator.participant(708)
    await consent(p)
    await say(p, "adventure games for Linux")
    desk = await open_desk(bot.db)
    session = await session_of(desk)
    assert session is not None
    assert await act(desk, "end", session, reason="done") == "applied"
    await p.wait_for_text("1/5")
    for following in ("2/5", "3/5", "4/5", "Additional comments"):
        await p.tap(text="4 · Agree")
        await p.wait_for_text(following)
    await p.send_text("fine")
    await p.wait_for_text("Thank you for taking part")
    await until(lambda: nothing_live(desk))
    [ended] = await desk.live_sessions(include_ended=True)
    assert (ended.session_id, ended.state, ended.exchanges) == (session, "ended", 1)
    assert ended.elapsed is not None and ended.since_last_message is None
    assert await desk.knows(session) and not await desk.knows("p0-1")


async def test_an_idle_console_reads_nothing_and_holds_no_transaction(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd))
    p = emulator.participant(709)
    await consent(p)
    await settle(p)  # the bot's last writes are durable: nothing changes from here on
    desk = await open_desk(bot.db, clock=lambda: 2e9)
    first = await desk.live_sessions()
    token = await desk.changes()
    assert await desk.live_sessions() == first and await desk.waiting_replies() == []
    assert await desk.changes() == token  # nothing committed: nothing re-read
    assert not checkpoint_blocked(bot.db)  # the console never keeps the bot from checkpointing


def test_times_and_ids_fit_their_columns() -> None:
    assert [fmt.duration(s) for s in (None, 0, 59.9, 60, 7199, 7200, 86400 * 3)] == [
        "–",
        "0s",
        "59s",
        "1m",
        "119m",
        "2h",
        "3d",
    ]
    assert fmt.short_id("p3f9a2c1d2e3f4a5-12") == "p3f9a2-12"
    assert fmt.clip("hmd-gift-long", 8) == "hmd-gif…"


def test_stage_names_match_the_engine() -> None:
    shown = {_STATE_OF_STAGE.get(stage.value, stage.value) for stage in Stage}
    assert shown - ENDED_STATES == {
        "consent",
        "assigning",
        "held",
        "dialogue",
        "questionnaire",
    }


async def test_wrong_databases_and_commands_get_precise_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no study database"):
        await Desk.open(tmp_path / "missing.sqlite", "ada")
    old = tmp_path / "old.sqlite"
    stamp_schema_version(old, 4)
    with pytest.raises(SchemaError, match=r"schema version 4.*start the bot \(ozlab run\)"):
        await Desk.open(old, "ada")
    assert not (tmp_path / "missing.sqlite").exists()  # never created by looking
    notes = tmp_path / "notes.sqlite"
    notes.write_text("not a database, just notes")
    with pytest.raises(StoreError, match="not a study database"):
        await Desk.open(notes, "ada")


async def test_bad_commands_are_refused_before_they_reach_the_bot(
    start_bot: StartBot, hmd: StudyBundle, open_desk: Any
) -> None:
    bot = await start_bot(shop(hmd))
    desk = await open_desk(bot.db, getpass.getuser())
    with pytest.raises(DeskError, match="unknown command"):
        await desk.command("dance", "p1-1")
    with pytest.raises(DeskError, match="needs a session"):
        await desk.command("say", None, text="hi")
    with pytest.raises(DeskError, match="not session"):
        await desk.gate("room:1", True)
    assert command_log(bot.db) == []


async def test_an_edited_reply_that_ends_the_task_comes_before_the_closing_line(
    tmp_path: Path,
) -> None:
    """The wizard's edit and the closing line are committed at one instant: the transcript
    follows the order of the commit, not a guess from (time, who)."""
    store = await open_store(tmp_path / "study.sqlite", lambda: 100.0)
    records: list[fx.Record] = [
        fx.RecordConsent(Consent.ACCEPTED),
        fx.OpenSession("p-1", "task", "sys", 0, "random", "1"),
        fx.RecordUserTurn("p-1", 1, "add it to my wishlist"),
        fx.RecordSystemTurn(
            "p-1",
            1,
            "Added it.",
            1.0,
            source=ReplySource.EDITED,
            original_text="Done",
            wizard="ada",
        ),
        fx.RecordEvent(EventKind.CLOSING_LINE, "p-1", {"text": "Thank you, task done!"}),
        fx.CloseSession("p-1", EndReason.SUCCESS, True),
    ]
    status = ParticipantStatus(Stage.QUESTIONNAIRE, 100.0, "p-1", "task", "sys")
    await store.commit_step(StepCommit("s", "p", "{}", status, "k", records))
    await store.close()
    async with await Desk.open(tmp_path / "study.sqlite", "ada") as desk:
        shown = [(line.who, line.text) for line in await desk.transcript("p-1")]
    assert shown == [
        ("participant", "add it to my wishlist"),
        ("edited", "Added it."),
        ("system", "Thank you, task done!"),
        ("end", "session ended: success"),
    ]
