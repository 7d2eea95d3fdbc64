"""Erasure (GDPR art. 17), as every store backend promises it: all of one participant in one
go, nobody else touched, and an anonymous count left behind."""

from __future__ import annotations

from typing import Any

from bot.engine import effects as fx
from bot.store.erasure import ledger_digest
from bot.store.interface import StudyStore
from bot.store.model import ErasureRecord, StepCommit
from bot.vocabulary import AnswerStatus, CommandKind, EventKind, GateLevel, GateScope, Moment
from tests.store_contract.test_contract import session, step


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
    info = await store.read_snapshot(lambda table, rows: tables.setdefault(table, []).extend(rows))
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
