"""OperatorTasks: erasure (GDPR art. 17) of all of one participant in one transaction with
its ledger, retention, chat keys, backups that open as the study stood, and simulated
participants marked as such."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.core.errors import StoreError
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    AnswerStatus,
    CommandKind,
    EventKind,
    GateLevel,
    GateScope,
    Moment,
    Stage,
)
from bot.engine import effects as fx
from bot.store.erasure import ledger_digest
from bot.store.interface import StudyStore
from bot.store.model import ErasureRecord, StepCommit
from tests.store_contract.backends import attach_backend, open_backend, sqlite_url, stored_bytes
from tests.store_contract.conftest import OpenStore
from tests.store_contract.records import (
    EXCHANGE,
    conversation,
    give,
    ready,
    rows_into,
    rows_of,
    session,
    step,
    tables,
    targets_of,
)


def everything(participant: str) -> StepCommit:
    sid = f"{participant}-1"
    return step(
        participant,
        *session(participant),
        fx.RecordUserTurn(sid, 1, f"words of {participant}"),
        fx.RecordSystemTurn(sid, 1, "a reply", 12.0),
        fx.RecordEvent(EventKind.REMINDED, sid),
        fx.RecordEvent(EventKind.STUDY_COMPLETED, None),
        fx.RecordResponse(
            sid, "q", "i", 3, "3", None, AnswerStatus.ANSWERED, 1.0, Moment.POST_TASK
        ),
        fx.RecordResponse(
            None, "q", "c", None, None, "a comment", AnswerStatus.ANSWERED, 1.0, Moment.POST_STUDY
        ),
        undelivered='[{"kind": "Send"}]',
    )


async def snapshot(store: StudyStore) -> tuple[dict[str, list[Any]], Any]:
    tables: dict[str, list[Any]] = {}
    info = await store.read_snapshot(rows_into(tables))
    return tables, info


async def test_an_erasure_takes_all_of_one_participant_and_counts_a_withdrawal(
    store: StudyStore,
) -> None:
    await store.remember_updates([(7, "sealed-of-p"), (8, "sealed-of-q")])
    await store.commit_step(everything("p"))
    await store.commit_step(everything("q"))
    await store.append_command("w", CommandKind.NOTE, "p-1", {"turn": 1, "text": "about p"})
    await store.append_command("w", CommandKind.NOTE, "q-1", {"turn": 1, "text": "about q"})
    await store.settle([fx.RecordGate(GateScope(GateLevel.SESSION, "p-1"), True, None, "w")])

    await store.record_definition("s", '{"study": {"withdrawals_by_system": true}}')
    erased = await store.erase_participant("p", [7])

    assert erased is not None
    assert (erased.sessions, erased.exchanges, erased.responses) == (1, 1, 2)
    assert (erased.events, erased.commands, erased.pending_updates) == (2, 1, 1)
    tables, info = await snapshot(store)
    for table, rows in tables.items():
        assert not any(v in ("p", "p-1") for row in rows for v in row), table
    assert len(tables["sessions"]) == len(tables["exchanges"]) == 1
    assert [u for u, _ in await store.pending_updates()] == [8]
    assert [p.participant_id for p in await store.load_participants("s")] == ["q"]
    assert all(s.session_id != "p-1" for s in await store.sessions())
    assert GateScope(GateLevel.SESSION, "p-1") not in await store.gates()
    assert info.withdrawals == (("s", "", 1), ("s", "sys", 1))

    assert await store.erase_participant("p") is None  # nothing left, nothing counted twice
    assert (await snapshot(store))[1].withdrawals == info.withdrawals


async def test_an_erased_participants_words_are_nowhere_in_what_keeps_the_study(
    open_store: OpenStore, backend: str, location: str, tmp_path: Path, request: Any
) -> None:
    """Deleted rows live on where the backend keeps them (SQLite's free pages and WAL,
    PostgreSQL's heap until vacuumed): the erasure wipes them there too."""
    store = await open_store()
    words = "zebra-quartz-" + "7" * 24  # long enough to be found only where it was written
    sid = "p-1"
    for n in range(1, 40):  # several pages' worth, and an update that leaves old versions
        await store.commit_step(
            step("p", *(session("p") if n == 1 else ()), fx.RecordUserTurn(sid, n, f"{words} {n}"))
        )
    await store.commit_step(step("q", *session("q"), fx.RecordUserTurn("q-1", 1, "kept words")))
    server = request.getfixturevalue("postgres") if backend == "postgresql" else None
    place = tmp_path / "study.sqlite"
    assert words.encode() in stored_bytes(backend, location, place, server)

    await store.erase_participant("p")

    kept = stored_bytes(backend, location, place, server)
    assert words.encode() not in kept
    assert b"kept words" in kept


async def test_the_erasure_ledger_keeps_a_digest_and_a_time_and_nothing_else(
    store: StudyStore,
) -> None:
    await store.commit_step(everything("p"))
    await store.commit_step(everything("q"))
    assert await store.erasure_ledger() == []
    await store.erase_participant("p")
    await store.erase_participant("p")  # nothing left: no second line
    (line,) = await store.erasure_ledger()
    assert line == ErasureRecord("s", ledger_digest("p"), line.erased_at)
    assert "p" not in (line.digest, line.study_id) and len(line.digest) == 64


async def test_chat_keys_are_dropped_and_inactive_participants_found(store: StudyStore) -> None:
    await store.commit_step(everything("p"))
    assert await store.inactive_since("s", 0.0) == []
    assert await store.inactive_since("s", 10_000.0) == ["p"]
    assert await store.drop_chat_keys() == 1
    assert [p.chat_key for p in await store.load_participants("s")] == [None]


async def test_erasing_a_participant_takes_the_ratings_of_their_conversation(
    store: StudyStore,
) -> None:
    sid = await ready(store)
    other = await conversation(store, "q", 1)
    await store.add_annotation_targets("hri", targets_of("hri", other, 1, start=10))
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-1"), (f"{other}#1", EXCHANGE, "A-1"))
    for target in (f"{sid}#1", f"{other}#1"):
        await store.record_annotation("A-1", "hri", target, EXCHANGE, "c", "c.i", 3)
    await store.erase_participant("p")
    assert [r.target for r in await store.annotation_ratings()] == [f"{other}#1"]
    assert all(t.session_id == other for t in await store.annotation_targets("hri"))
    assert [a.annotator_id for a in await store.annotators("hri")] == ["A-1", "A-2"]


async def test_a_closed_study_forgets_annotators_chats_too(store: StudyStore) -> None:
    await ready(store)  # A-1 joined with a sealed chat id
    assert await store.drop_chat_keys() == 2  # the participant's and the annotator's
    [one, _] = await store.annotators("hri")
    assert one.chat_key is None
    assert (await store.annotator_for_chat("hash-1")) is not None  # still who they are


async def test_a_backup_opens_as_the_study_stood(
    store: StudyStore, backend: str, tmp_path: Path
) -> None:
    await store.commit_step(step("p", *session(), fx.RecordUserTurn("p-1", 1, "hi")))
    await store.commit_step(step("q", status=ParticipantStatus(Stage.CONSENT, 2.0)))
    target = tmp_path / "backups" / "study-copy"
    target.parent.mkdir()
    await store.backup(target)
    await store.commit_step(step("r"))  # after the backup: not in it
    copy = await open_backend(sqlite_url(target))  # a backup is a SQLite file on every backend
    try:
        assert {p.participant_id for p in await copy.load_participants("s")} == {"p", "q"}
        copied = await tables(copy)
    finally:
        await copy.close()
    now = await tables(store)
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
    copy = await attach_backend(sqlite_url(target))
    try:
        assert [p.participant_id for p in await copy.live_participants()] == ["p", "q"]
    finally:
        await copy.close()


async def test_a_backup_nowhere_is_one_clear_error(store: StudyStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        await store.backup(tmp_path / "missing" / "copy")
    assert str(caught.value) == (
        f"cannot write the backup {tmp_path / 'missing' / 'copy'}: there is no folder"
        f" {tmp_path / 'missing'}"
    )
    with pytest.raises(StoreError, match=r"it is a folder; give a file name$"):
        await store.backup(tmp_path)


async def _simulated(store: StudyStore) -> dict[str, object]:
    found: dict[str, object] = {}

    def sink(table: str, columns: Any) -> None:
        if table == "participants":
            for row in rows_of(columns):
                found[str(row[0])] = row[-1]

    await store.read_snapshot(sink)
    return found


async def test_participants_are_people_until_a_simulation_marks_them(store: StudyStore) -> None:
    await store.commit_step(step("p1"))
    await store.commit_step(step("p2"))
    assert await _simulated(store) == {"p1": 0, "p2": 0}
    assert await store.mark_simulated(["p2", "nobody"]) == 1
    assert await _simulated(store) == {"p1": 0, "p2": 1}


async def test_annotators_are_people_until_a_simulation_marks_them(store: StudyStore) -> None:
    await ready(store)
    assert [a.simulated for a in await store.annotators("hri")] == [False, False]
    assert await store.mark_simulated_annotators(["A-2", "nobody"]) == 1
    found = {a.annotator_id: a.simulated for a in await store.annotators("hri")}
    assert found == {"A-1": False, "A-2": True}
    joined = await store.annotator_for_chat("hash-1")
    assert joined is not None and not joined.simulated
