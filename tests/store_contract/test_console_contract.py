"""ConsoleReadModel: where each participant stands, the gates set, transcripts in commit
order, and a change number that moves when someone else commits."""

from __future__ import annotations

from bot.core.participants import HeldReply, ParticipantStatus
from bot.core.vocabulary import (
    EndReason,
    EventKind,
    Gate,
    GateLevel,
    GateScope,
    ReplySource,
    SessionState,
    Stage,
)
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import EarlierStep
from tests.store_contract.backends import attach_backend
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import session, step, tables


async def test_gates_come_back_as_set(store: StudyStore) -> None:
    system = GateScope(GateLevel.SYSTEM, "shop")
    study = GateScope(GateLevel.STUDY, "s")
    await store.settle([fx.RecordGate(system, True, 30.0, "ada")])
    await store.settle([fx.RecordGate(study, True, None, "ada")])
    await store.settle([fx.RecordGate(study, False, None, "grace")])
    assert await store.gates() == {
        system: Gate(system, True, 30.0, "ada", 1000.0),
        study: Gate(study, False, None, "grace", 1000.0),
    }


async def test_the_read_model_shows_where_each_participant_stands(store: StudyStore) -> None:
    held = HeldReply(("Try this",), 5.0, 35.0)
    status = ParticipantStatus(
        Stage.DIALOGUE,
        4.0,
        "p-1",
        "task",
        "sys",
        session_started_at=2.0,
        exchanges=1,
        turns=2,
        pending_message="and for Linux?",
        held=held,
        gated=True,
        gate_auto_send=30.0,
        cell="row 1, sys",
    )
    await store.commit_step(
        step(
            "p",
            *session(),
            fx.RecordUserTurn("p-1", 1, "hi"),
            fx.RecordSystemTurn("p-1", 1, "hello", 3.0),
            fx.RecordUserTurn("p-1", 2, "and for Linux?"),
            fx.RecordSystemTurn("p-1", 2, None, 3.0, error="timeout"),
            status=status,
        )
    )
    await store.commit_step(step("q", status=ParticipantStatus(Stage.CONSENT, 6.0)))
    p, q = await store.live_participants()
    assert (p.participant_id, p.study_id, p.status, p.last_error) == ("p", "s", status, "timeout")
    assert (q.participant_id, q.status.stage, q.last_error) == ("q", Stage.CONSENT, None)
    assert q.status.cell is None  # not assigned yet
    finished = ParticipantStatus(Stage.FINISHED, 9.0, cell="row 0, sys")
    await store.commit_step(step("q", state=None, status=finished))  # the status alone
    assert [p.status.cell for p in await store.live_participants()] == ["row 1, sys", "row 0, sys"]
    assert [w.participant_id for w in await store.waiting_replies()] == ["p"]
    [stored] = await store.sessions(count_exchanges=True)
    assert (stored.session_id, stored.state, stored.exchanges) == ("p-1", SessionState.DIALOGUE, 1)


async def test_a_transcript_lists_lines_in_the_order_they_were_committed(
    store: StudyStore,
) -> None:
    await store.commit_step(step("p", *session(), fx.RecordUserTurn("p-1", 1, "add it")))
    # The wizard's edit ends the task: the reply and the closing line share one instant.
    await store.commit_step(
        step(
            "p",
            fx.RecordSystemTurn("p-1", 1, "Added.", 2.0, source=ReplySource.EDITED, wizard="ada"),
            fx.RecordEvent(EventKind.CLOSING_LINE, "p-1", {"text": "Thank you!"}),
            fx.CloseSession("p-1", EndReason.SUCCESS, True),
        )
    )
    transcript = await store.transcript("p-1")
    assert transcript is not None
    [exchange] = transcript.exchanges
    [closing] = transcript.events
    assert exchange.user_seq is not None and exchange.system_seq is not None
    assert closing.seq is not None and transcript.end_seq is not None
    assert exchange.user_seq < exchange.system_seq < closing.seq < transcript.end_seq
    assert (exchange.source, exchange.wizard, closing.kind) == (
        ReplySource.EDITED,
        "ada",
        EventKind.CLOSING_LINE,
    )
    assert transcript.end_reason is EndReason.SUCCESS
    assert await store.transcript("nobody-1") is None


async def test_an_exchange_committed_with_its_reply_is_the_exchange_two_commits_make(
    open_store: OpenStore,
) -> None:
    """The line and its reply in one transaction (the step that only asked the system goes
    with the step its answer brings) make the row a line and a later reply make."""
    clock = Clock()
    store = await open_store(clock)

    def records(who: str) -> tuple[fx.Record, fx.Record, fx.Record]:
        return (
            fx.RecordUserTurn(f"{who}-1", 1, "add it"),
            fx.RecordEvent(EventKind.CLOSING_LINE, f"{who}-1", {"text": "between"}),
            fx.RecordSystemTurn(f"{who}-1", 1, "Added.", 2.5, source=ReplySource.EDITED),
        )

    for who in "pq":
        await store.commit_step(step(who, *session(who)))
    line, event, reply = records("p")
    clock.now = 1010.0
    await store.commit_step(step("p", reply, earlier=EarlierStep((line, event), None, 1005.0)))
    line, event, reply = records("q")
    clock.now = 1005.0
    await store.commit_step(step("q", line, event))
    clock.now = 1010.0
    await store.commit_step(step("q", reply))
    together, apart = (await tables(store))["exchanges"]
    assert together[2:] == apart[2:]  # all but the row id and the session
    found = [await store.transcript(f"{who}-1") for who in "pq"]
    for transcript in found:
        assert transcript is not None
        [exchange] = transcript.exchanges
        [between] = transcript.events
        assert exchange.user_seq is not None and exchange.system_seq is not None
        assert exchange.user_seq < between.seq < exchange.system_seq
        assert (exchange.user_at, exchange.system_at, exchange.source) == (
            1005.0,
            1010.0,
            ReplySource.EDITED,
        )


async def test_lines_of_two_writers_taking_turns_keep_their_commit_order(
    open_store: OpenStore,
) -> None:
    """A writer that knows the line sequence from its own last commit must still see another
    writer's commit in between (a console's command, an import)."""
    one, two = await open_store(), await open_store()
    await one.commit_step(step("p", *session()))
    for turn, writer in enumerate((one, two, one, one, two, one), start=1):
        await writer.commit_step(step("p", fx.RecordUserTurn("p-1", turn, f"line {turn}")))
        await writer.commit_step(step("p", fx.RecordSystemTurn("p-1", turn, f"reply {turn}", 1.0)))
    transcript = await one.transcript("p-1")
    assert transcript is not None
    seqs = [seq for e in transcript.exchanges for seq in (e.user_seq, e.system_seq)]
    assert [e.turn for e in transcript.exchanges] == [1, 2, 3, 4, 5, 6]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs) == 12


async def test_a_console_sees_what_changed(store: StudyStore, location: str) -> None:
    console = await attach_backend(location)
    try:
        before = await console.changes()
        assert await console.changes() == before  # nothing committed: nothing to re-read
        await store.commit_step(step("p"))
        assert await console.changes() != before
    finally:
        await console.close()


async def test_each_systems_health_since_a_time(open_store: OpenStore) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    records: list[fx.Record] = [*session("p")]
    for turn, latency, error in ((1, 400.0, None), (2, 100.0, None), (3, 9000.0, "timeout")):
        records += [
            fx.RecordUserTurn("p-1", turn, f"question {turn}"),
            fx.RecordSystemTurn("p-1", turn, None if error else "answer", latency, error),
        ]
    await store.commit_step(step("p", *records))
    clock.now = 200.0
    await store.commit_step(step("p", fx.RecordUserTurn("p-1", 4, "a later one")))
    [health] = await store.system_health(150.0)
    assert (health.system_id, health.exchanges, health.failures) == ("sys", 1, 0)
    assert health.median_ms is None  # not answered yet
    [health] = await store.system_health(0.0)
    assert (health.exchanges, health.failures, health.median_ms, health.p95_ms) == (
        4,
        1,
        100.0,
        400.0,
    )
