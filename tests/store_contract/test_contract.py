"""What every store backend promises the bot, the console, analytics and importers."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from bot.engine import effects as fx
from bot.errors import StoreError
from bot.store.interface import StudyStore
from bot.store.model import HeldReply, ImportedAnswer, ParticipantStatus, StepCommit
from bot.vocabulary import (
    AnswerStatus,
    CommandKind,
    CommandOutcome,
    Consent,
    EndReason,
    EventKind,
    Gate,
    GateLevel,
    GateScope,
    Moment,
    ReplySource,
    SessionState,
    Stage,
)
from tests.store_contract.backends import attach_backend, open_backend
from tests.store_contract.conftest import Clock, OpenStore

ROOT = Path(__file__).resolve().parents[2]


def step(participant: str, *records: fx.Record, **fields: object) -> StepCommit:
    status = fields.pop("status", ParticipantStatus(Stage.DIALOGUE, 1.0))
    return StepCommit(
        "s",
        participant,
        str(fields.pop("state", "{}")),
        status,
        "k",
        records,
        **fields,  # type: ignore[arg-type]
    )


def session(participant: str = "p") -> list[fx.Record]:
    return [
        fx.RecordConsent(Consent.ACCEPTED),
        fx.OpenSession(f"{participant}-1", "task", "sys", 0, "random", "1"),
    ]


# --- the bot ---------------------------------------------------------------------------------


async def test_a_committed_step_survives_a_kill_of_the_writing_process(
    backend: str, location: str
) -> None:
    steps = 40
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.store_contract.writer",
        backend,
        location,
        str(steps),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    announced = []
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
    store = await open_backend(backend, location)
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


async def test_two_writers_at_once_lose_nothing(open_store: OpenStore, backend: str) -> None:
    one, two = await open_store(), await open_store()

    async def write(store: StudyStore, prefix: str) -> None:
        await asyncio.gather(*(store.commit_step(step(f"{prefix}{n}")) for n in range(100)))

    await asyncio.gather(write(one, "a"), write(two, "b"))
    found = {p.participant_id for p in await one.load_participants("s")}
    assert found == {f"{x}{n}" for x in "ab" for n in range(100)}


# --- the console's read model --------------------------------------------------------------


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


async def test_a_console_sees_what_changed(store: StudyStore, backend: str, location: str) -> None:
    console = await attach_backend(backend, location)
    try:
        before = await console.changes()
        assert await console.changes() == before  # nothing committed: nothing to re-read
        await store.commit_step(step("p"))
        assert await console.changes() != before
    finally:
        await console.close()


async def test_the_latest_definition_of_each_study_is_kept_with_keys_masked(
    store: StudyStore,
) -> None:
    secret = '{"study": {"systems": [{"id": "a", "headers": {"Authorization": "Bearer x"}}]}}'
    assert await store.record_definition("s", '{"v": 1}') is True
    assert await store.record_definition("s", '{"v": 1}') is False
    assert await store.record_definition("s", secret) is True
    assert await store.record_definition("t", '{"v": 3}') is True
    definitions = await store.latest_definitions()
    assert definitions["t"] == '{"v": 3}'
    assert "Bearer" not in definitions["s"] and '"Authorization": "***"' in definitions["s"]


# --- importers and analytics ----------------------------------------------------------------


def answer(line: int, person: str, item: str, **fields: object) -> ImportedAnswer:
    return ImportedAnswer(
        line, person, "q", item, AnswerStatus.ANSWERED, Moment.POST_STUDY, f"form:{item}",
        10.0, 12.0, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_imported_answers_are_all_or_nothing_and_never_resumed(store: StudyStore) -> None:
    answers = [answer(2, "P017", "q.a", value=4, system_id="sys"), answer(3, "P018", "q.b")]
    dry = await store.import_answers("s", answers, {"file": "paper.csv"}, dry_run=True)
    assert (dry.answers, dry.new_participants) == (2, 2)
    assert (await store.import_context("s")).participants == {}  # a dry run writes nothing
    done = await store.import_answers("s", answers, {"file": "paper.csv"})
    assert (done.written, done.answers, done.participants, done.new_participants) == (
        True, 2, 2, 2,
    )  # fmt: skip
    again = await store.import_answers("s", answers[1:], {"file": "paper.csv"})
    assert (again.written, again.duplicates) == (False, (3,))
    assert (await store.import_context("s")).participants == {"P017": "s", "P018": "s"}
    assert await store.load_participants("s") == []  # answered on paper: nothing to resume
    assert await store.live_participants() == []

    chunks: dict[str, list[tuple[object, ...]]] = {}
    info = await store.read_snapshot(lambda table, rows: chunks.setdefault(table, []).extend(rows))
    assert info.has_tables
    imported = [(r[1], r[5], r[15], r[16], r[17]) for r in chunks["responses"]]
    assert imported == [
        ("P017", "q.a", "post_study", "import", "sys"),
        ("P018", "q.b", "post_study", "import", None),
    ]
    [event] = chunks["events"]
    assert event[4] == "responses_imported"


async def test_a_snapshot_holds_every_table_with_the_moment_of_each_answer(
    store: StudyStore,
) -> None:
    await store.commit_step(
        step(
            "p",
            *session(),
            fx.RecordResponse(
                "p-1",
                "q",
                "q.a",
                4,
                "Agree",
                None,
                AnswerStatus.ANSWERED,
                999.0,
                Moment.EXCHANGE,
                scope="p-1#turn1",
                turn=1,
            ),
        )
    )
    chunks: dict[str, list[tuple[object, ...]]] = {}
    await store.read_snapshot(lambda table, rows: chunks.setdefault(table, []).extend(rows))
    assert {table: len(rows) for table, rows in chunks.items()} == {
        "participants": 1,
        "sessions": 1,
        "responses": 1,
    }
    [row] = chunks["responses"]
    assert row[15:] == ("exchange", "telegram", None)


async def test_the_demo_summary_counts_sessions_per_system(store: StudyStore) -> None:
    await store.commit_step(
        step(
            "p",
            *session(),
            fx.RecordUserTurn("p-1", 1, "hi"),
            fx.RecordSystemTurn("p-1", 1, "hello", 3.0),
            fx.CloseSession("p-1", EndReason.SUCCESS, True),
            fx.RecordResponse(
                "p-1",
                "q",
                "q.a",
                4,
                "Agree",
                None,
                AnswerStatus.ANSWERED,
                999.0,
                Moment.POST_TASK,
            ),
        )
    )
    [summary] = await store.system_summaries()
    assert (summary.system_id, summary.sessions, summary.succeeded, summary.ended) == (
        "sys", 1, 1, 1,
    )  # fmt: skip
    assert (summary.mean_exchanges, dict(summary.item_means)) == (1.0, {"q.a": 4.0})


async def test_times_come_from_the_store_clock(open_store: OpenStore) -> None:
    store = await open_store(Clock(5.0))
    await store.settle([fx.RecordGate(GateScope(GateLevel.STUDY, "s"), True, None, "ada")])
    [gate] = (await store.gates()).values()
    assert gate.set_at == 5.0


# --- the operator ---------------------------------------------------------------------------


async def snapshot(store: StudyStore) -> dict[str, list[tuple[object, ...]]]:
    chunks: dict[str, list[tuple[object, ...]]] = {}
    await store.read_snapshot(lambda table, rows: chunks.setdefault(table, []).extend(rows))
    return chunks


async def test_a_backup_opens_as_the_study_stood(
    store: StudyStore, backend: str, tmp_path: Path
) -> None:
    await store.commit_step(step("p", *session(), fx.RecordUserTurn("p-1", 1, "hi")))
    await store.commit_step(step("q", status=ParticipantStatus(Stage.CONSENT, 2.0)))
    target = tmp_path / "backups" / "study-copy"
    target.parent.mkdir()
    await store.backup(target)
    await store.commit_step(step("r"))  # after the backup: not in it
    copy = await open_backend(backend, str(target))
    try:
        assert {p.participant_id for p in await copy.load_participants("s")} == {"p", "q"}
        copied = await snapshot(copy)
    finally:
        await copy.close()
    now = await snapshot(store)
    assert copied["sessions"] == now["sessions"] and copied["exchanges"] == now["exchanges"]
    assert len(copied["participants"]) == len(now["participants"]) - 1


async def test_a_backup_replaces_the_last_one_whole(
    store: StudyStore, backend: str, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    target = folder / "nightly"
    await store.commit_step(step("p"))
    await store.backup(target)
    await store.commit_step(step("q"))
    await store.backup(target)
    assert [path.name for path in folder.iterdir()] == ["nightly"]  # nothing half-written left
    copy = await attach_backend(backend, str(target))
    try:
        assert [p.participant_id for p in await copy.live_participants()] == ["p", "q"]
    finally:
        await copy.close()


async def test_a_backup_never_overwrites_the_live_database(
    store: StudyStore, location: str, tmp_path: Path
) -> None:
    await store.commit_step(step("p"))
    alias = tmp_path / "another-name"
    os.link(location, alias)
    for target in (Path(location), tmp_path / "." / Path(location).name, alias):
        with pytest.raises(StoreError, match=r"^refusing to write the backup over the live"):
            await store.backup(target)
    await store.commit_step(step("q"))  # the store still works, with everything in it
    assert {p.participant_id for p in await store.load_participants("s")} == {"p", "q"}


async def test_a_backup_nowhere_is_one_clear_error(store: StudyStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        await store.backup(tmp_path / "missing" / "copy")
    assert str(caught.value) == (
        f"cannot write the backup {tmp_path / 'missing' / 'copy'}: there is no folder"
        f" {tmp_path / 'missing'}"
    )
    with pytest.raises(StoreError, match=r"it is a folder; give a file name$"):
        await store.backup(tmp_path)
