"""The store on a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.engine import effects as fx
from bot.store.schema import MIGRATIONS
from bot.store.store import Store


@pytest.fixture
async def store(tmp_path: Path):
    opened = await Store.open(tmp_path / "study.sqlite", lambda: 1000.0)
    yield opened
    await opened.close()


def rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


async def test_schema_is_versioned_and_reopening_migrates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    for _ in range(2):
        store = await Store.open(path, lambda: 0.0)
        await store.close()
    assert rows(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert rows(path, "PRAGMA journal_mode") == [("wal",)]


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    with pytest.raises(RuntimeError, match="upgrade ozlab"):
        await Store.open(path, lambda: 0.0)


async def test_redelivered_updates_are_not_new(store: Store, tmp_path: Path) -> None:
    assert await store.remember_updates([(1, "a"), (2, "b")]) == {1, 2}
    assert await store.remember_updates([(2, "b"), (3, "c")]) == {3}
    await store.commit_step(
        study_id="s", participant_id="p", state=None, chat_key=None, records=[], update_id=2
    )
    assert [uid for uid, _ in await store.pending_updates()] == [1, 3]
    handled = rows(tmp_path / "study.sqlite", "SELECT payload FROM inbox WHERE update_id = 2")
    assert handled == [(None,)]  # nothing of a handled update is kept


async def test_a_step_commits_state_and_rows_together(store: Store, tmp_path: Path) -> None:
    records: list[fx.Record] = [
        fx.RecordConsent("accepted"),
        fx.OpenSession("p-1", "task", "sys", 0, "random", "1:p"),
        fx.RecordUserTurn("p-1", 1, "hello"),
        fx.RecordSystemTurn("p-1", 1, "hi!", 12.5),
        fx.CloseSession("p-1", "success", True),
        fx.RecordResponse("p-1", "q", "q.a", 4, "Agree", None, "answered", 999.0),
        fx.RecordEvent("reminded", "p-1", {"n": 1}),
    ]
    await store.commit_step(
        study_id="s",
        participant_id="p",
        state='{"x":1}',
        chat_key="k",
        records=records,
        update_id=None,
    )
    path = tmp_path / "study.sqlite"
    assert rows(path, "SELECT consent, chat_key, state FROM participants") == [
        ("accepted", "k", '{"x":1}')
    ]
    assert rows(path, "SELECT end_reason, success, state FROM sessions") == [
        ("success", 1, "dialogue")
    ]
    assert rows(path, "SELECT turn, user_text, system_text, latency_ms FROM exchanges") == [
        (1, "hello", "hi!", 12.5)
    ]
    assert rows(path, "SELECT scope, item_id, value, label FROM responses") == [
        ("p-1", "q.a", 4, "Agree")
    ]
    assert rows(path, "SELECT kind, data FROM events") == [("reminded", '{"n": 1}')]


async def test_a_failing_write_does_not_sink_the_others(store: Store, tmp_path: Path) -> None:
    def step(participant: str, records: list[fx.Record]):
        return store.commit_step(
            study_id="s",
            participant_id=participant,
            state="{}",
            chat_key=None,
            records=records,
            update_id=None,
        )

    # The second write violates a foreign key (no such session); the others must land.
    results = await asyncio.gather(
        step("a", [fx.RecordEvent("one")]),
        step("b", [fx.RecordUserTurn("missing-session", 1, "x")]),
        step("c", [fx.RecordEvent("three")]),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], sqlite3.IntegrityError)
    kinds = rows(tmp_path / "study.sqlite", "SELECT kind FROM events ORDER BY id")
    assert kinds == [("one",), ("three",)]


async def test_the_study_definition_is_kept_once_per_version(store: Store, tmp_path: Path) -> None:
    assert await store.record_definition("s", '{"v": 1}') is True
    assert await store.record_definition("s", '{"v": 1}') is False
    assert await store.record_definition("s", '{"v": 2}') is True
    kept = rows(tmp_path / "study.sqlite", "SELECT study_id, definition FROM studies ORDER BY id")
    assert kept == [("s", '{"v": 1}'), ("s", '{"v": 2}')]
