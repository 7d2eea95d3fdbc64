"""Reading the study database into frames: a real file written by the store, read-only,
from one snapshot; empty, old and partial databases; the synthetic study generator."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analytics.data import loading
from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS, load_study_data
from analytics.data.synthetic import synthetic_bundle, write_synthetic_study
from analytics.report.numbers import build_report
from bot.core.errors import StoreError
from bot.core.vocabulary import (
    AnswerStatus,
    Consent,
    EndReason,
    EventKind,
    Moment,
    ReplySource,
    SessionState,
)
from bot.engine import effects as fx
from bot.store import snapshot
from bot.store.blocking import run_blocking
from bot.store.connection import SCHEMA_VERSION
from bot.store.definition import definition_json
from bot.store.model import SNAPSHOT_COLUMNS, StepCommit
from bot.store.schema import MIGRATIONS
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle
from tests.storage_probe import schema, session_half_written

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ANSWERED = AnswerStatus.ANSWERED


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


async def _study(
    db: Path, bundle: StudyBundle | None = None, *, wizard_answers: bool = False
) -> None:
    """A small study through the store: two participants, one of whom meets two systems.
    The second reply of the first session times out, or ``wizard_answers`` in its place."""
    bundle = bundle or synthetic_bundle(2, "within")
    clock = Clock()
    store = await open_store(db, clock)

    async def step(participant: str, *records: fx.Record, at: float) -> None:
        clock.now = at
        await store.commit_step(StepCommit("synthetic", participant, "{}", None, "sealed", records))

    try:
        await store.record_definition("synthetic", definition_json(bundle))
        await step("ann", fx.RecordConsent(Consent.ACCEPTED), at=1000)
        await step(
            "ann", fx.OpenSession("a1", "find-gift", "system-a", 0, "balanced", "1"), at=1010
        )
        await step("ann", fx.RecordUserTurn("a1", 1, "hello"), at=1020)
        await step("ann", fx.RecordSystemTurn("a1", 1, "hi!", 800.0), at=1021)
        await step("ann", fx.RecordUserTurn("a1", 2, "a game?"), at=1040)
        second = fx.RecordSystemTurn("a1", 2, None, 30000.0, "timeout")
        if wizard_answers:
            second = fx.RecordSystemTurn(
                "a1", 2, "Lantern Road", 30000.0, source=ReplySource.WIZARD, wizard="ada"
            )
        await step("ann", second, at=1070)
        rating = fx.RecordResponse(
            "a1", "synthetic-exchange", "synthetic-exchange.q3", 2, "Disagree", None,
            ANSWERED, 1071.0, Moment.EXCHANGE, scope="a1#turn1", turn=1,
        )  # fmt: skip
        await step("ann", rating, at=1075)
        await step(
            "ann",
            fx.CloseSession("a1", EndReason.SUCCESS, True),
            fx.SetSessionState("a1", SessionState.QUESTIONNAIRE),
            at=1310,
        )
        answers = [
            fx.RecordResponse("a1", "synthetic-post", f"synthetic-post.{item}", value, None,
                              text, ANSWERED, 1311.0, Moment.POST_TASK)
            for item, value, text in [("q1", 4, None), ("q2", 2, None), ("comment", None, "Nice!")]
        ]  # fmt: skip
        await step("ann", *answers, fx.SetSessionState("a1", SessionState.ENDED), at=1320)
        await step(
            "ann", fx.OpenSession("a2", "book-table", "system-b", 1, "balanced", "1"), at=1400
        )
        await step(
            "ann",
            fx.RecordEvent(EventKind.ABANDONED, "a2"),
            fx.SetSessionState("a2", SessionState.ABANDONED),
            at=5000,
        )
        post = fx.RecordResponse(
            None, "idial", "idial.s1", 3, "Often", None, ANSWERED, 5001.0, Moment.POST_STUDY
        )
        await step("ann", post, at=5010)
        await step("bob", fx.RecordConsent(Consent.ACCEPTED), at=2000)
        await step(
            "bob", fx.OpenSession("b1", "find-gift", "system-b", 0, "balanced", "2"), at=2010
        )
        post = fx.RecordResponse(
            None, "idial", "idial.s4", 1, "Rarely", None, ANSWERED, 2100.0, Moment.POST_STUDY
        )
        await step("bob", post, at=2110)
        await step("cat", fx.RecordConsent(Consent.DECLINED), at=3000)
    finally:
        await store.close()


async def test_frames_from_a_real_database(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _study(db)
    data = load_study_data(db)
    assert data.notes == () and data.bundle is not None
    assert data.has_wizard_source  # the store records who sent each reply
    sessions = data.sessions.set_index("session_id")
    assert sessions.loc["a1", "n_exchanges"] == 2
    assert sessions.loc["a1", "n_failed_replies"] == 1
    assert sessions.loc["a1", "duration_s"] == 300.0
    assert sessions.loc["a1", "expected_duration_s"] == 300.0  # from the scenario
    assert sessions.loc["a2", "state"] == "abandoned"
    assert sessions.loc["b1", "scenario_kind"] == "dialogue"
    exchanges = data.exchanges.set_index("turn")
    assert exchanges.loc[2, "error"] == "timeout" and exchanges.loc[2, "system_id"] == "system-a"
    responses = data.responses.set_index("item_id")
    # Reverse item: stored as asked (2), scored min + max − 2 = 4.
    assert responses.loc["synthetic-post.q2", "value"] == 2
    assert responses.loc["synthetic-post.q2", "score"] == 4
    assert responses.loc["synthetic-post.q1", "score"] == 4
    assert responses.loc["synthetic-post.comment", "text"] == "Nice!"
    assert responses.loc["synthetic-post.comment", "type"] == "text"
    assert responses.loc["synthetic-exchange.q3", "moment"] == "exchange"
    assert responses.loc["synthetic-exchange.q3", "turn"] == 1
    assert responses.loc["synthetic-exchange.q3", "score"] == 4  # "confusing" is reverse
    # Post-study answers: attributed to the participant's system, unless they met several.
    assert responses.loc["idial.s1", "system_id"] == SEVERAL_SYSTEMS
    assert responses.loc["idial.s4", "system_id"] == "system-b"
    assert responses.loc["idial.s4", "score"] == 3  # 0 + 4 − 1
    assert responses.loc["idial.s1", "moment"] == "post_study"
    assert set(data.participants["participant_id"]) == {"ann", "bob", "cat"}
    assert "chat_key" not in data.participants.columns and "state" not in data.participants.columns
    codebook = data.items.set_index("item_id")
    assert (
        codebook.loc["idial.s4", "reverse"]
        and codebook.loc["idial.s4", "construct"] == "effectiveness"
    )
    labels = data.choices[data.choices["item_id"] == "idial.s1"]
    assert list(labels["label"]) == ["Never", "Rarely", "Sometimes", "Often", "Always"]


async def test_the_report_of_a_small_study(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _study(db)
    report = build_report(load_study_data(db))
    assert report.study.design == "within" and report.study.systems == ("system-a", "system-b")
    overall = report.participation.overall
    assert (overall["participants"], overall["consented"], overall["declined_consent"]) == (3, 2, 1)
    assert (overall["sessions"], overall["completed_sessions"], overall["abandoned_sessions"]) == (
        3,
        1,
        1,
    )
    completion = report.completion.by_system.set_index("system_id")
    # system-b: one abandoned session (a failure) and one still in progress (left out).
    assert completion.loc["system-b", ["n", "successes", "in_progress"]].tolist() == [1, 0, 1]
    assert completion.loc["system-a", "success_rate"] == 1.0
    assert completion.loc["system-a", "duration_vs_expected"] == 1.0
    assert report.wizard.note in (
        "no wizard data: this database does not record it",  # before the wizard migration
        "no wizard involvement: every system turn was sent as the system wrote it",
    )
    assert list(report.comments["text"]) == ["Nice!"]
    assert "1 sessions are still in progress" in " ".join(report.notes)
    assert list(report.for_system("system-a")["comments"]["text"]) == ["Nice!"]


def _fingerprint(db: Path) -> list[str]:
    files = [db, db.with_name(db.name + "-wal")]
    return [hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.exists()]


async def test_reading_never_writes_and_sees_one_snapshot(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _study(db)
    async with await open_store(db, Clock()) as bot:  # open: what it commits stays in the WAL
        in_the_wal = fx.RecordEvent(EventKind.SYSTEM_AVAILABLE, None, {"system": "system-a"})
        await bot.commit_step(StepCommit("synthetic", "bob", None, None, None, (in_the_wal,)))
        before = _fingerprint(db)
        load_study_data(db)
        assert _fingerprint(db) == before  # no checkpoint, no write, by the last reader either
        with session_half_written(db, "x", "bob"):  # the bot in the middle of a write
            data = load_study_data(db)  # neither blocked nor shown the uncommitted row
    assert "x" not in set(data.sessions["session_id"])
    assert "system_available" in set(data.events["kind"])
    assert "x" in set(load_study_data(db).sessions["session_id"])


async def test_an_empty_database_gives_empty_frames_and_notes(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    store = await open_store(db, Clock())
    await store.close()
    data = load_study_data(db)
    assert data.sessions.empty and data.responses.empty and data.bundles == {}
    report = build_report(data)
    assert "No participants yet." in report.notes
    assert any(note.startswith("No sessions yet") for note in report.notes)
    assert any("study definition is not stored" in note for note in report.notes)
    assert report.completion.by_system.empty and report.comparisons.table.empty


def test_a_file_without_tables_or_no_file(tmp_path: Path) -> None:
    db = tmp_path / "blank.sqlite"
    db.write_bytes(b"")
    report = build_report(load_study_data(db))
    assert report.notes[0] == "The database has no tables yet: the bot has never run on it."
    with pytest.raises(StoreError, match="no study database"):
        load_study_data(tmp_path / "missing.sqlite")


async def test_an_older_schema_without_definition_scores_answers_as_given(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.executescript(MIGRATIONS[0])  # the first schema: no turn, attention or studies
        conn.execute("PRAGMA user_version=1")
        conn.execute("INSERT INTO participants VALUES ('p','s',NULL,'accepted',1,1,1,'{}')")
        conn.execute(
            "INSERT INTO sessions VALUES ('s1','p','s','task','sys',0,'random','0','ended',1,61,"
            "'success',1)"
        )
        conn.execute(
            "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id, item_id,"
            " value, status, shown_at, answered_at)"
            " VALUES ('p','s1','s1','q','q.a',2,'answered',1,5)"
        )
        conn.commit()
    data = load_study_data(db)
    assert data.schema_version == 1 and data.responses["turn"].isna().all()
    assert data.responses.loc[0, "score"] == 2
    report = build_report(data)
    assert report.completion.by_system.loc[0, "success_rate"] == 1.0
    assert any("scored as given" in note for note in report.notes)


async def test_wizard_share_when_exchanges_record_their_source(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _study(db, wizard_answers=True)  # turn 1 as the system wrote it, turn 2 a wizard's
    report = build_report(load_study_data(db))
    table = report.wizard.table.set_index("source")
    assert report.wizard.note is None
    assert table.loc["system", "share"] == 0.5 and table.loc["wizard", "share"] == 0.5


async def test_synthetic_study_writes_what_it_says_on_the_bot_schema(tmp_path: Path) -> None:
    reference = tmp_path / "reference.sqlite"
    await (await open_store(reference, Clock())).close()
    db = tmp_path / "synthetic.sqlite"
    written = write_synthetic_study(db, sessions=60, responses_per_session=40, seed=7, systems=3)
    assert (written.sessions, written.responses) == (60, 2400)
    assert schema(db) == schema(reference)
    assert schema(db)[0] == len(MIGRATIONS)
    data = load_study_data(db)
    assert len(data.sessions) == 60 and len(data.responses) == 2400
    assert (data.sessions.groupby("session_id").size() == 1).all()
    assert data.responses["system_id"].isin(["system-a", "system-b", "system-c"]).all()
    assert not data.responses["system_id"].isin([NO_SYSTEM, SEVERAL_SYSTEMS]).any()
    again = tmp_path / "again.sqlite"
    write_synthetic_study(again, sessions=60, responses_per_session=40, seed=7, systems=3)
    assert load_study_data(again).responses["value"].equals(data.responses["value"])  # seeded
    report = build_report(data)
    assert report.comparisons.table["test"].iloc[0] == "Kruskal–Wallis H"


def test_the_bot_never_loads_the_analysis_stack() -> None:
    """pandas, pingouin and Arrow cost the bot start-up time and memory: only analytics
    uses them (the store reads a snapshot through Arrow only when analytics asks)."""
    code = (
        "import sys, bot.runtime.app, bot.cli, bot.runtime.participants, bot.store.sqlite\n"
        "import bot.pilot.summary, bot.pilot.demo\n"
        "heavy = {'pandas', 'pingouin', 'scipy', 'analytics', 'pyarrow', 'adbc_driver_sqlite'}\n"
        "heavy &= set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)


def test_reading_a_study_never_loads_the_engine(tmp_path: Path) -> None:
    """The report reads a snapshot: the modules that write an engine step's records, and
    the engine they follow, are no part of it (their import was a tenth of a small
    report's own modules)."""
    db = tmp_path / "synthetic.sqlite"
    write_synthetic_study(db, sessions=8, responses_per_session=6, seed=2, systems=2)
    code = (
        "import sys\n"
        "from analytics.data.selecting import load_study\n"
        f"assert len(load_study({str(db)!r}).responses) == 48\n"
        "engine = sorted(m for m in sys.modules if m.startswith('bot.engine'))\n"
        "writers = {'bot.store.applying', 'bot.store.annotation_flow'} & set(sys.modules)\n"
        "assert not engine and not writers, (engine, writers)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)


def test_a_backend_reading_rows_gives_the_frames_of_the_columnar_read(tmp_path: Path) -> None:
    """``read_tables`` without a columnar reader makes the Arrow tables from any connection's
    rows (an older file upgraded in memory; a backend without a driver of its own): the
    frames are the same as from the SQLite driver's columns."""
    db = tmp_path / "synthetic.sqlite"
    write_synthetic_study(db, sessions=20, responses_per_session=20, seed=4, systems=2)
    columnar = loading._Frames()
    run_blocking(lambda: _snapshot_into(db, columnar))
    from_rows = loading._Frames()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    snapshot.read_tables(conn, from_rows, SCHEMA_VERSION, True)
    conn.close()
    for table in SNAPSHOT_COLUMNS:
        pd.testing.assert_frame_equal(from_rows.frame(table), columnar.frame(table))


async def _snapshot_into(db: Path, sink: loading._Frames) -> None:
    store = await open_store(db)
    try:
        await store.read_snapshot(sink)
    finally:
        await store.close()


def test_each_frame_is_what_pandas_makes_of_the_rows(tmp_path: Path) -> None:
    """The snapshot comes as Arrow columns; each frame is typed as pandas types the table's
    rows (``from_records``: integers with a gap are floats, a column without a value is
    objects, a column with a word among numbers too), the ids of the large tables categoricals
    with sorted categories: what the report's numbers were made with."""
    db = tmp_path / "synthetic.sqlite"
    write_synthetic_study(db, sessions=40, responses_per_session=30, seed=3, systems=2)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE responses SET value = 'high' WHERE id = 5")  # a file edited by hand
    expected: dict[str, pd.DataFrame] = {}
    for table, columns in SNAPSHOT_COLUMNS.items():
        selected = ", ".join("id" if c == snapshot._ID[table] else c for c in columns)
        query = f"SELECT {selected} FROM {table} ORDER BY {snapshot._ORDER[table]}"
        frame = pd.DataFrame.from_records(conn.execute(query).fetchall(), columns=list(columns))
        if table in ("exchanges", "responses", "events"):
            for name in set(loading._CATEGORIES) & set(columns):
                frame[name] = frame[name].astype("category")
        expected[table] = frame
    conn.close()
    found = run_blocking(lambda: loading._read_all(db, None))
    assert found["responses"]["value"].dtype == object
    for table, frame in expected.items():
        pd.testing.assert_frame_equal(found[table], frame, check_exact=True)
        for name in frame.columns:
            if isinstance(frame[name].dtype, pd.CategoricalDtype):
                want, got = frame[name].cat.categories, found[table][name].cat.categories
                assert got.dtype == want.dtype and list(got) == list(want)
                assert got.is_monotonic_increasing
