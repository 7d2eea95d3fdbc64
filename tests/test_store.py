"""The SQLite backend itself: its file, its migrations and its failures (what every backend
promises is in tests/store_contract/)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from bot.core.errors import SchemaError, StoreError
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import CommandOutcome, EventKind, Moment, Origin, Stage
from bot.engine import effects as fx
from bot.store.connection import BUSY_TIMEOUT_MS, SCHEMA_VERSION, statements
from bot.store.model import JudgeCall, StepCommit
from bot.store.schema import MIGRATIONS
from bot.store.sqlite import SqliteStore, is_study_database, open_existing, open_store
from bot.store.transaction import Tx
from tests.store_contract.records import rows_into
from tests.store_contract.records import step as contract_step

FIXTURE = Path(__file__).parent / "fixtures" / "schema5-main.sqlite"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await open_store(tmp_path / "study.sqlite", lambda: 1000.0)
    yield opened
    await opened.close()


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def snapshot(path: Path) -> dict[str, list[tuple[object, ...]]]:
    chunks: dict[str, list[tuple[object, ...]]] = {}
    store = await open_existing(path, read_only=True)
    try:
        await store.read_snapshot(rows_into(chunks))
    finally:
        await store.close()
    return chunks


SHIPPED = (
    "f323950feee04baa", "39ef5f6c1dfb4a51", "43bc369d51a4d6e1", "52c1372be32abcc4",
    "ae1d23520722a13b", "c80d2c2965f0869f", "c9475740dbeec154", "9dbab820fa2f0466",
    "686bf893de4631d6", "4aaf519a502f3ea4", "c4a27588ea64ff3d", "3b629d3c7688d956",
    "306ef329a5f69f7b", "1dbe25c3aa9ccaf6", "6bfac42c7e888fa4", "05389412f102ab04",
)  # fmt: skip
"""The digest of each SQLite migration that has shipped: a file made by an earlier ozlab
was migrated by exactly these, so they are never edited (a new one is appended)."""


def test_a_shipped_migration_is_never_edited() -> None:
    digests = tuple(hashlib.sha256(m.encode()).hexdigest()[:16] for m in MIGRATIONS)
    assert digests[: len(SHIPPED)] == SHIPPED
    assert len(MIGRATIONS) == SCHEMA_VERSION


async def test_schema_is_versioned_and_reopening_migrates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    for _ in range(2):
        store = await open_store(path)
        await store.close()
    assert rows(path, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    assert rows(path, "PRAGMA journal_mode") == [("wal",)]
    assert is_study_database(path)


async def test_the_writer_and_the_reader_are_aiosqlite_connections_set_up_the_ozlab_way(
    tmp_path: Path,
) -> None:
    """Each runs on an aiosqlite thread of its own with what every ozlab connection has (WAL,
    the synchronous setting asked for, the busy timeout, foreign keys); closing ends both."""
    before = set(threading.enumerate())
    store = await open_store(tmp_path / "study.sqlite", synchronous="FULL")
    workers = [
        t for t in set(threading.enumerate()) - before if "_connection_worker_thread" in t.name
    ]
    assert len(workers) == 2
    try:
        for conn in (store._writer_conn, store._reader):
            assert isinstance(conn, aiosqlite.Connection)
            found = {}
            for pragma in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys"):
                async with conn.execute(f"PRAGMA {pragma}") as cursor:
                    row = await cursor.fetchone()
                    assert row is not None
                    found[pragma] = row[0]
            assert found == {
                "journal_mode": "wal",
                "synchronous": 2,  # FULL
                "busy_timeout": BUSY_TIMEOUT_MS,
                "foreign_keys": 1,
            }
    finally:
        await store.close()
    for worker in workers:
        worker.join(timeout=10)  # a closed connection's thread ends just after its last reply
    assert not any(worker.is_alive() for worker in workers)


async def test_a_write_holds_the_write_lock_from_its_start(store: SqliteStore) -> None:
    """BEGIN IMMEDIATE: a batch that reads first cannot fail later beside another writer."""

    def second_writer(tx: Tx) -> str:
        other = sqlite3.connect(store.path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
        except sqlite3.OperationalError as error:
            return str(error)
        finally:
            other.close()
        return "not locked"

    assert await store.write(second_writer) == "database is locked"


async def test_newer_and_older_schemas_are_refused_in_a_sentence(tmp_path: Path) -> None:
    newer, older = tmp_path / "newer.sqlite", tmp_path / "older.sqlite"
    for path, version in ((newer, SCHEMA_VERSION + 1), (older, 5)):
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA user_version={version}")
        conn.close()
    with pytest.raises(SchemaError, match="upgrade ozlab"):
        await open_store(newer)
    with pytest.raises(SchemaError, match="upgrade ozlab"):
        await open_existing(newer, read_only=True)
    with pytest.raises(SchemaError, match=r"start the bot \(ozlab run\) once on it"):
        await open_existing(older)
    with pytest.raises(StoreError, match="no study database"):
        await open_existing(tmp_path / "absent.sqlite")


async def test_a_file_that_is_not_a_database_is_named_as_such(tmp_path: Path) -> None:
    notes = tmp_path / "thesis.sqlite"
    notes.write_text("chapter one\n" * 100)
    assert not is_study_database(notes)
    with pytest.raises(StoreError, match="is not a study database"):
        await open_store(notes)


async def test_a_failing_write_does_not_sink_the_others(store: SqliteStore) -> None:
    def step(participant: str, *records: fx.Record) -> StepCommit:
        return StepCommit("s", participant, "{}", None, None, records)

    # The second write violates a foreign key (no such session); the others must land.
    results = await asyncio.gather(
        store.commit_step(step("a", fx.RecordEvent(EventKind.REMINDED))),
        store.commit_step(step("b", fx.RecordUserTurn("missing-session", 1, "x"))),
        store.commit_step(step("c", fx.RecordEvent(EventKind.ABANDONED))),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], sqlite3.IntegrityError)
    assert rows(Path(store.path), "SELECT kind FROM events ORDER BY id") == [
        ("reminded",),
        ("abandoned",),
    ]


async def test_a_command_no_ozlab_knows_is_rejected_by_the_store(store: SqliteStore) -> None:
    conn = sqlite3.connect(store.path)
    conn.execute("INSERT INTO commands (at, wizard, kind) VALUES (1, 'ada', 'dance')")
    conn.commit()
    conn.close()
    assert await store.pending_commands(0) == []
    [(command_id,)] = rows(Path(store.path), "SELECT id FROM commands")
    assert await store.command_outcomes([int(str(command_id))]) == {
        command_id: CommandOutcome.REJECTED
    }


async def test_two_stores_writing_at_once_leave_an_intact_file(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    one, two = await open_store(path), await open_store(path)
    try:
        await asyncio.gather(
            *(
                store.commit_step(
                    StepCommit("s", f"{name}{n}", "{}", ParticipantStatus(Stage.CONSENT, 1.0), None)
                )
                for n in range(100)
                for name, store in (("a", one), ("b", two))
            )
        )
    finally:
        await one.close()
        await two.close()
    assert rows(path, "SELECT count(*) FROM participants") == [(200,)]
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]


# --- migrations keep the data ---------------------------------------------------------------

_TABLES = ("participants", "sessions", "exchanges", "responses", "events", "inbox")


def counts(path: Path) -> dict[str, int]:
    return {t: int(str(rows(path, f"SELECT count(*) FROM {t}")[0][0])) for t in _TABLES}


async def test_the_database_of_the_previous_ozlab_migrates_with_every_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "study.sqlite"
    shutil.copy(FIXTURE, path)
    before = counts(path)
    commands = rows(path, "SELECT id, kind, outcome FROM commands ORDER BY id")
    gates = rows(path, "SELECT scope, gated FROM gates ORDER BY scope")
    by_questionnaire = rows(
        path,
        "SELECT questionnaire_id, count(*), count(turn), count(stimulus_id) FROM responses"
        " GROUP BY questionnaire_id",
    )
    store = await open_store(path)
    try:
        assert counts(path) == before
        assert rows(path, "SELECT id, kind, outcome FROM commands ORDER BY id") == commands
        assert rows(path, "SELECT scope, gated FROM gates ORDER BY scope") == gates
        resumed = {p.participant_id for p in await store.load_participants("xrec")}
        live = await store.live_participants()
        sessions = await store.sessions()
    finally:
        await store.close()
    assert {"P017", "P018"}.isdisjoint(resumed) and len(resumed) == 2
    assert {p.participant_id for p in live} == {s.participant_id for s in sessions}
    [wizard] = [p for p in live if p.status.system_id == "shop-v1" and p.study_id == "hmd"]
    assert (wizard.status.stage, wizard.status.session_id) == (
        Stage.QUESTIONNAIRE,
        f"{wizard.participant_id}-1",
    )
    assert wizard.status.turns == 2 and wizard.status.held is None

    data = await snapshot(path)
    responses = data["responses"]
    moments: dict[str, set[str]] = {}
    for row in responses:
        moments.setdefault(str(row[4]), set()).add(str(row[15]))
    assert moments == {
        "xrec-exchange": {Moment.EXCHANGE.value, Moment.POST_STUDY.value},
        "e2e-nlg": {Moment.RATING.value},
        "e2e-nlg-screening": {Moment.SCREENING.value},
    }
    kept = {(q, n, t, s) for q, n, t, s in by_questionnaire}
    assert {
        (q, sum(r[4] == q for r in responses), sum(r[4] == q and r[12] is not None
         for r in responses), sum(r[4] == q and r[13] is not None for r in responses))
        for q, *_ in by_questionnaire
    } == kept  # fmt: skip
    imported = sorted((r[1], r[16], r[17]) for r in responses if r[16] == Origin.IMPORT.value)
    assert imported == [("P017", "import", "shop-v1"), ("P018", "import", None)]
    transcript_seqs = rows(
        path,
        "SELECT count(*) FROM exchanges WHERE user_seq IS NULL"
        " OR (system_at IS NOT NULL AND system_seq IS NULL)",
    )
    assert transcript_seqs == [(0,)]


def old_database(path: Path, version: int) -> None:
    """A database as ozlab left it at ``version``: the first migrations, and rows of every
    kind that version could hold."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:version]:
        for statement in statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version={version}")
    journey = {
        "participant": "p", "stage": "dialogue", "started_at": 1.0, "last_activity_at": 50.0,
        "tasks": [{"scenario_id": "task", "system_id": "sys"}], "task_index": 0,
        "session_started_at": 10.0, "exchanges": 1, "turns": 1, "pending_message": "more?",
        "waiting": {"texts": ["held"], "events": [], "latency_ms": 1.0, "since": 60.0,
                    "auto_send_at": None},
        "paused": False, "gated": True, "gate_auto_send": 30.0, "reminded": True,
        "abandoned": False, "history": [],
    }  # fmt: skip
    paper = {"participant": "P017", "stage": "finished", "started_at": 5.0,
             "last_activity_at": 5.0, "tasks": [], "history": []}  # fmt: skip
    participants = "INSERT INTO participants (id, study_id, chat_key, consent, created_at,"
    participants += " updated_at, state) VALUES (?, 's', ?, 'accepted', 1, 1, ?)"
    conn.execute(participants, ("p", "key", json.dumps(journey)))
    conn.execute(participants, ("P017", None, json.dumps(paper)))
    conn.execute(
        "INSERT INTO sessions (id, participant_id, study_id, scenario_id, system_id, task_index,"
        " design, seed, state, started_at, ended_at, end_reason, success)"
        " VALUES ('p-1', 'p', 's', 'task', 'sys', 0, 'random', '1', 'ended', 10, 21, 'success', 1)"
    )
    conn.execute(
        "INSERT INTO exchanges (session_id, turn, user_text, user_at, system_text, system_at)"
        " VALUES ('p-1', 1, 'hi', 20, 'hello', 21)"
    )
    conn.execute("INSERT INTO events (at, participant_id, session_id, kind) VALUES (21, 'p',"
                 " 'p-1', 'closing_line')")  # fmt: skip
    answers = [
        ("p", "p-1", "p-1", "post", None, None),
        ("p", None, "study", "final", None, None),
        ("P017", None, "import:sys|form", "final", None, None),
    ]
    if version >= 3:
        answers += [("p", "p-1", "p-1#turn1", "rate", 1, None), ("p", "p-1", "p-1#x", "row",
                     None, "stim-1")]  # fmt: skip
    if version >= 4:
        definition = json.dumps({"study": {"id": "s", "screening": ["screen"]}})
        conn.execute(
            "INSERT INTO studies (study_id, loaded_at, definition, digest) VALUES ('s', 1, ?, 'x')",
            (definition,),
        )
        answers.append(("p", None, "screening", "screen", None, None))
    for person, session, scope, questionnaire, turn, stimulus in answers:
        extra = ", turn, stimulus_id" if version >= 3 else ""
        values = ", ?, ?" if version >= 3 else ""
        conn.execute(
            "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id, item_id,"
            f" value, status, shown_at, answered_at{extra})"
            f" VALUES (?, ?, ?, ?, 'i', 3, 'answered', 1, 2{values})",
            (person, session, scope, questionnaire, *((turn, stimulus) if version >= 3 else ())),
        )
    conn.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4])
async def test_every_earlier_schema_migrates_with_its_rows(tmp_path: Path, version: int) -> None:
    path = tmp_path / f"v{version}.sqlite"
    old_database(path, version)
    before = counts(path)
    store = await open_store(path)
    try:
        assert counts(path) == before
        assert [p.participant_id for p in await store.load_participants("s")] == ["p"]
        [live] = await store.live_participants()
        transcript = await store.transcript("p-1")
    finally:
        await store.close()
    status = live.status
    assert (status.stage, status.session_id, status.scenario_id, status.system_id) == (
        Stage.DIALOGUE, "p-1", "task", "sys",
    )  # fmt: skip
    assert (status.last_activity_at, status.session_started_at, status.exchanges) == (50, 10, 1)
    assert (status.pending_message, status.gated, status.gate_auto_send) == ("more?", True, 30)
    assert status.held is not None and status.held.texts == ("held",)
    assert (status.held.since, status.reminded, status.paused) == (60.0, True, False)
    assert transcript is not None
    [exchange], [closing] = transcript.exchanges, transcript.events
    assert exchange.user_seq < closing.seq < exchange.system_seq < transcript.end_seq  # type: ignore[operator]
    moments = {(r[4], r[15], r[16], r[17]) for r in (await snapshot(path))["responses"]}
    expected = {
        ("post", "post_task", "telegram", None),
        ("final", "post_study", "telegram", None),
        ("final", "post_study", "import", "sys"),
    }
    if version >= 3:
        expected |= {("rate", "exchange", "telegram", None), ("row", "rating", "telegram", None)}
    if version >= 4:
        expected.add(("screen", "screening", "telegram", None))
    assert moments == expected


async def test_a_file_from_before_model_judges_migrates_with_its_rows(tmp_path: Path) -> None:
    """Version 15 to 16: every row stays, the judges' tables come empty, and a session
    erased afterwards takes its judge calls along (the trigger the migration adds)."""
    path = tmp_path / "v15.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:15]:
        for statement in statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version=15")
    conn.execute(
        "INSERT INTO participants (id, study_id, consent, created_at, updated_at, state)"
        " VALUES ('p', 's', 'accepted', 1, 1, '{}')"
    )
    conn.execute(
        "INSERT INTO sessions (id, participant_id, study_id, scenario_id, system_id, task_index,"
        " design, seed, state, started_at) VALUES ('p-1', 'p', 's', 't', 'sys', 0, 'random',"
        " '1', 'ended', 10)"
    )
    conn.execute(
        "INSERT INTO exchanges (session_id, turn, user_text, user_at) VALUES ('p-1', 1, 'hi', 20)"
    )
    conn.execute(
        "INSERT INTO votes (id, study_id, source, rater, rater_kind, system_a, system_b, winner,"
        " question, session_id, origin, voted_at) VALUES ('v', 's', 'preference', 'p',"
        " 'participant', 'a', 'b', 'a', 'q', 'p-1', 'telegram', 30)"
    )
    conn.close()
    before = {**counts(path), "votes": 1}
    store = await open_store(path, lambda: 40.0)
    try:
        assert {**counts(path), "votes": len(await store.votes())} == before
        assert await store.judgements() == [] and await store.judge_costs() == []
        call = JudgeCall("k", "j", '{"messages": "hi"}', "4", 3, 1, "p-1")
        assert await store.keep_judge_call(call)
        assert await store.judge_call("k") == call
        await store.erase_participant("p")
        assert await store.judge_call("k") is None
    finally:
        await store.close()
    assert rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


async def test_analytics_reads_an_old_file_without_changing_it(tmp_path: Path) -> None:
    path = tmp_path / "study.sqlite"
    shutil.copy(FIXTURE, path)
    before = path.read_bytes()
    data = await snapshot(path)
    assert path.read_bytes() == before
    assert {r[15] for r in data["responses"]} == {"exchange", "rating", "screening", "post_study"}


@pytest.mark.parametrize("version", [4, SCHEMA_VERSION])
async def test_a_column_of_several_types_reads_each_value_as_stored(
    tmp_path: Path, version: int
) -> None:
    """A file edited by hand can hold words in a column of numbers: the snapshot keeps every
    value as SQLite stored it (the columnar reader would have written the numbers as words),
    from the current schema and from an older one upgraded in memory."""
    path = tmp_path / "study.sqlite"
    old_database(path, version)
    if version == SCHEMA_VERSION:
        await (await open_store(path)).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE responses SET value = 'high' WHERE scope = 'study'")
    conn.execute("UPDATE responses SET value = 2.5 WHERE scope = 'p-1'")
    conn.execute("UPDATE exchanges SET latency_ms = 'slow'")
    conn.execute("UPDATE sessions SET seed = 7")  # a text column: the number is stored as text
    conn.close()
    data = await snapshot(path)
    values = {r[3]: r[6] for r in data["responses"]}
    assert (values["study"], values["p-1"], values["import:sys|form"]) == ("high", 2.5, 3)
    assert [type(v) for v in (values["study"], values["p-1"], values["import:sys|form"])] == [
        str,
        float,
        int,
    ]
    assert [r[7] for r in data["exchanges"]] == ["slow"]
    assert [r[7] for r in data["sessions"]] == ["7"]


async def test_a_backup_never_overwrites_the_live_database(
    store: SqliteStore, tmp_path: Path
) -> None:
    """The file under another name (``./``, a hard link) is still the live database."""
    live = tmp_path / "study.sqlite"
    await store.commit_step(contract_step("p"))
    alias = tmp_path / "another-name"
    os.link(live, alias)
    for target in (live, tmp_path / "." / live.name, alias):
        with pytest.raises(StoreError, match=r"^refusing to write the backup over the live"):
            await store.backup(target)
    await store.commit_step(contract_step("q"))  # the store still works, with everything in it
    assert {p.participant_id for p in await store.load_participants("s")} == {"p", "q"}
