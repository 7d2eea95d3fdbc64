"""HotPath: the durable inbox, a step committed with the update it consumed, the
console's commands taken once, whatever kills the writer."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from bot.core.storable_text import storable
from bot.core.vocabulary import CommandKind, CommandOutcome, GateLevel, GateScope
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import SNAPSHOT_COLUMNS, EarlierStep, StepCommit
from tests.store_contract.backends import open_backend
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import session, step, tables

ROOT = Path(__file__).resolve().parents[2]


DAY = 24 * 3600.0


async def test_a_committed_step_survives_a_kill_of_the_writing_process(
    location: str,
) -> None:
    steps = 40
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.store_contract.writer",
        location,
        str(steps),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    announced: list[str] = []
    try:
        async with asyncio.timeout(30):
            while len(announced) < steps // 2:  # killed half-way through its work
                line = (await child.stdout.readline()).decode()
                assert line, "the writer ended before committing"
                announced.append(line)
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()
    assert child.returncode == -signal.SIGKILL
    store = await open_backend(location)
    try:
        found = {p.participant_id for p in await store.load_participants("s")}
    finally:
        await store.close()
    assert {f"p{n}" for n in range(len(announced))} <= found


async def test_an_update_is_handled_once(store: StudyStore) -> None:
    assert await store.remember_updates([(1, "a"), (2, "b")]) == {1, 2}
    assert await store.remember_updates([(2, "b"), (3, "c")]) == {3}
    assert await store.pending_updates() == [(1, "a"), (2, "b"), (3, "c")]
    await store.commit_step(StepCommit("s", "p", None, None, None, (), update_id=2))
    assert await store.pending_updates() == [(1, "a"), (3, "c")]
    assert await store.remember_updates([(2, "b")]) == set()  # handled: still not new


async def test_a_step_resumes_with_its_state_chat_and_undelivered_messages(
    store: StudyStore,
) -> None:
    await store.commit_step(step("p", state='{"x":1}', undelivered='["hi"]'))
    await store.commit_step(
        StepCommit("s", "p", '{"x":2}', None, "other-key", (), undelivered='["again"]')
    )
    [stored] = await store.load_participants("s")
    assert (stored.state, stored.chat_key, stored.undelivered) == ('{"x":2}', "k", '["again"]')
    store.delivered("p")
    await store.commit_step(StepCommit("s", "q", "{}", None, None))  # after the delivery
    [stored] = [p for p in await store.load_participants("s") if p.participant_id == "p"]
    assert stored.undelivered is None
    assert await store.load_participants("another study") == []


async def test_a_command_is_applied_once(store: StudyStore) -> None:
    first = await store.append_command("ada", CommandKind.SAY, "p-1", {"text": "hello"})
    second = await store.append_command("grace", CommandKind.PAUSE, "p-1")
    pending = await store.pending_commands(0)
    assert [(c.id, c.kind, c.wizard, c.payload) for c in pending] == [
        (first, CommandKind.SAY, "ada", {"text": "hello"}),
        (second, CommandKind.PAUSE, "grace", {}),
    ]
    assert [c.id for c in await store.pending_commands(first)] == [second]
    await store.settle([fx.RecordCommand(first, CommandOutcome.APPLIED)])
    await store.settle([fx.RecordCommand(first, CommandOutcome.EXPIRED)])  # too late: ignored
    assert [c.id for c in await store.pending_commands(0)] == [second]
    assert await store.command_outcomes([first, second]) == {
        first: CommandOutcome.APPLIED,
        second: None,
    }


async def test_two_writers_at_once_lose_nothing(open_store: OpenStore) -> None:
    one, two = await open_store(), await open_store()

    async def write(store: StudyStore, prefix: str) -> None:
        await asyncio.gather(*(store.commit_step(step(f"{prefix}{n}")) for n in range(100)))

    await asyncio.gather(write(one, "a"), write(two, "b"))
    found = {p.participant_id for p in await one.load_participants("s")}
    assert found == {f"{x}{n}" for x in "ab" for n in range(100)}


async def test_times_come_from_the_store_clock(open_store: OpenStore) -> None:
    store = await open_store(Clock(5.0))
    await store.settle([fx.RecordGate(GateScope(GateLevel.STUDY, "s"), True, None, "ada")])
    [gate] = (await store.gates()).values()
    assert gate.set_at == 5.0


async def test_the_highest_update_id_is_told_handled_or_not(open_store: OpenStore) -> None:
    store = await open_store(Clock())
    assert await store.highest_update_id() == 0
    await store.remember_updates([(41, "a"), (7, "b")])
    assert await store.highest_update_id() == 41
    await store.commit_step(StepCommit("s", "p", None, None, None, (), update_id=41))
    assert await store.highest_update_id() == 41  # handled ids count: they must not come again


async def handled(store: StudyStore, update_id: int, payload: str) -> set[int]:
    new = await store.remember_updates([(update_id, payload)])
    await store.commit_step(StepCommit("s", "p", None, None, None, (), update_id=update_id))
    return new


async def test_an_id_handled_within_telegrams_day_is_a_redelivery(open_store: OpenStore) -> None:
    clock = Clock()
    store = await open_store(clock)
    assert await handled(store, 5, "first") == {5}
    clock.now += DAY - 60
    assert await store.remember_updates([(5, "first")]) == set()
    assert await store.pending_updates() == []


async def test_an_id_handled_longer_ago_than_telegram_keeps_updates_is_new(
    open_store: OpenStore,
) -> None:
    """Telegram numbers on at random after a week without updates: an old id may come again."""
    clock = Clock()
    store = await open_store(clock)
    assert await handled(store, 5, "first") == {5}
    clock.now += 8 * DAY
    assert await store.remember_updates([(5, "second")]) == {5}
    assert await store.pending_updates() == [(5, "second")]
    assert await store.remember_updates([(5, "second")]) == set()  # now its redelivery


async def test_an_old_update_not_yet_handled_is_never_replaced(open_store: OpenStore) -> None:
    clock = Clock()
    store = await open_store(clock)
    await store.remember_updates([(5, "kept")])
    clock.now += 8 * DAY
    assert await store.remember_updates([(5, "other")]) == set()
    assert await store.pending_updates() == [(5, "kept")]


async def test_a_step_that_only_asked_a_system_goes_with_the_next_at_its_own_time(
    open_store: OpenStore,
) -> None:
    """One transaction for an exchange: the message's row and consumed update are stamped
    when it was handled, the answer's when it came; the state is the later step's."""
    clock = Clock(2000.0)
    store = await open_store(clock)
    await store.commit_step(step("p", *session()))
    await store.remember_updates([(7, "sealed")])
    asked = EarlierStep((fx.RecordUserTurn("p-1", 1, "hi"),), 7, 1500.0)
    answer = fx.RecordSystemTurn("p-1", 1, "hello", 5.0)
    await store.commit_step(step("p", answer, state='{"x":2}', earlier=asked))
    assert await store.pending_updates() == []
    [stored] = await store.load_participants("s")
    assert stored.state == '{"x":2}'
    columns = SNAPSHOT_COLUMNS["exchanges"]
    [row] = [dict(zip(columns, r, strict=True)) for r in (await tables(store))["exchanges"]]
    assert (row["user_text"], row["user_at"]) == ("hi", 1500.0)
    assert (row["system_text"], row["system_at"]) == ("hello", 2000.0)


async def test_outside_text_made_storable_is_kept_alike_on_every_backend(
    store: StudyStore,
) -> None:
    """Text from outside may hold any character: made storable at its door (a NUL and a lone
    surrogate become U+FFFD), each backend keeps the same words."""
    said = storable("before\x00after \ud83d")
    await store.commit_step(step("p", *session(), fx.RecordUserTurn("p-1", 1, said)))
    [exchange] = (await tables(store))["exchanges"]
    assert "before\ufffdafter \ufffd" in exchange
