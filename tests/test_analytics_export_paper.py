"""``ozlab export`` for a paper: a small study written here through the store (7-point items
with a reverse one, yes/no, a choice whose answers are words, a multi-choice, comments,
ratings of single replies, a reply edited by a wizard and one written by a wizard, a
wizard's note and judgement) exported as CSV, Parquet and SPSS ``.sav``, long and wide."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pyreadstat
import pytest

from analytics.io.export import export_study, stamp_sav
from bot.cli import analytics_main as main
from bot.core.errors import StudyDataError
from bot.core.vocabulary import (
    AnswerStatus,
    CommandKind,
    CommandOutcome,
    Consent,
    EndReason,
    EventKind,
    Moment,
    ReplySource,
    SessionState,
)
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ANSWERED, SKIPPED = AnswerStatus.ANSWERED, AnswerStatus.SKIPPED
SEVEN = {1: "Strongly disagree", 2: "Disagree", 3: "Somewhat disagree", 4: "Neither",
         5: "Somewhat agree", 6: "Agree", 7: "Strongly agree"}  # fmt: skip
EPOCH = 1_767_225_600  # 2026-01-01 00:00:00 UTC


def _seven(item_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "scale", "id": item_id, "text": text, "min": 1, "max": 7, "labels": SEVEN,
            "construct": "usability", **extra}  # fmt: skip


def paper_bundle() -> StudyBundle:
    return StudyBundle.model_validate(
        {
            "study": {
                "id": "paper",
                "title": "A study for a paper",
                "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                "systems": [{"type": "demo", "id": "system-a"}, {"type": "demo", "id": "system-b"}],
                "scenarios": ["find-gift"],
                "post_study": ["about-you"],
                "design": {"type": "balanced", "systems": "between"},
            },
            "scenarios": {
                "find-gift": {
                    "id": "find-gift",
                    "title": "A gift",
                    "brief": "Find a gift.",
                    "post_task": ["usability"],
                    "exchange": ["reply"],
                }
            },
            "questionnaires": {
                "usability": {
                    "id": "usability",
                    "title": "This task",
                    "items": [
                        _seven("usability.u1", "The assistant understood me."),
                        _seven("usability.u2", "The assistant was hard to use.", reverse=True),
                        {"type": "yes_no", "id": "usability.done", "text": "Did you finish?"},
                        {
                            "type": "choice",
                            "id": "usability.most",
                            "text": "What did you do most?",
                            "required": False,
                            "options": [
                                {"value": "search", "label": "Searched"},
                                {"value": "compare", "label": "Compared"},
                                {"value": "buy", "label": "Bought"},
                            ],
                        },
                        {"type": "text", "id": "usability.comment", "text": "Any comments?"},
                    ],
                },
                "reply": {
                    "id": "reply",
                    "title": "This reply",
                    "items": [_seven("reply.clear", "The reply was clear.", construct=None)],
                },
                "about-you": {
                    "id": "about-you",
                    "title": "About you",
                    "items": [
                        {
                            "type": "choice",
                            "id": "about-you.often",
                            "text": "How often do you use chatbots?",
                            "options": [
                                {"value": "daily", "label": "Every day"},
                                {"value": "weekly", "label": "Every week"},
                                {"value": "never", "label": "Never"},
                            ],
                        },
                        {
                            "type": "multi_choice",
                            "id": "about-you.where",
                            "text": "Where?",
                            "options": [
                                {"value": "telegram", "label": "Telegram"},
                                {"value": "web", "label": "The web"},
                                {"value": "phone", "label": "A phone line"},
                            ],
                        },
                    ],
                },
            },
        }
    )


def _answer(session: str | None, q: str, item: str, value: int | None, label: str | None,
            text: str | None, at: float, moment: Moment, status: AnswerStatus = ANSWERED,
            turn: int | None = None) -> fx.RecordResponse:  # fmt: skip
    scope = f"{session}#turn{turn}" if turn else (session or "study")
    return fx.RecordResponse(session, q, f"{q}.{item}", value, label, text, status, at - 5,
                             moment, scope=scope, turn=turn)  # fmt: skip


async def write_paper_study(db: Path, *, define: bool = True) -> None:
    """Ann (system a): an edited and a wizard-written reply, ratings, a note, word answers.
    Bob (system b): a reply that never came, a skipped choice, a wizard's judgement.
    Cat declined: she has no row anywhere."""
    now = [1000.0]
    store = await open_store(db, lambda: now[0])

    async def step(participant: str, *records: fx.Record, at: float) -> None:
        now[0] = at
        await store.commit_step(StepCommit("paper", participant, "{}", None, "sealed", records))

    post, study = Moment.POST_TASK, Moment.POST_STUDY
    try:
        if define:
            await store.record_definition("paper", definition_json(paper_bundle()))
        await step("ann", fx.RecordConsent(Consent.ACCEPTED), at=1000)
        await step("ann", fx.OpenSession("a1", "find-gift", "system-a", 0, "balanced", "1"),
                   at=1010)  # fmt: skip
        await step("ann", fx.RecordUserTurn("a1", 1, "a game for Alex?"), at=1020)
        await step("ann", fx.RecordSystemTurn("a1", 1, "Lantern Road, for Linux.", 800.0),
                   at=1021)  # fmt: skip
        await step("ann", fx.RecordUserTurn("a1", 2, "is it on sale?"), at=1040)
        edited = fx.RecordSystemTurn("a1", 2, "Yes, 30% off until Sunday.", 9000.0,
                                     source=ReplySource.EDITED,
                                     original_text="Yes, it is on sale.", wizard="ada")  # fmt: skip
        await step("ann", edited, at=1050)
        await step("ann", fx.RecordUserTurn("a1", 3, "add it, thanks"), at=1060)
        written = fx.RecordSystemTurn("a1", 3, "Done: it is on Alex's wishlist.", 12000.0,
                                      source=ReplySource.WIZARD, wizard="ada")  # fmt: skip
        await step("ann", written, at=1075)
        noted = {"wizard": "ada", "text": "hesitated before 'add'", "turn": 3}
        note = fx.RecordEvent(EventKind.WIZARD_NOTE, "a1", noted)
        await step("ann", note, at=1076)
        await step("ann", _answer("a1", "reply", "clear", 6, "Agree", None, 1080, Moment.EXCHANGE,
                                  turn=1),
                   _answer("a1", "reply", "clear", 4, "Neither", None, 1081, Moment.EXCHANGE,
                           turn=2), at=1082)  # fmt: skip
        await step("ann", fx.CloseSession("a1", EndReason.SUCCESS, True),
                   fx.SetSessionState("a1", SessionState.QUESTIONNAIRE), at=1100)  # fmt: skip
        await step("ann",
                   _answer("a1", "usability", "u1", 6, "Agree", None, 1110, post),
                   _answer("a1", "usability", "u2", 2, "Disagree", None, 1111, post),
                   _answer("a1", "usability", "done", 1, "Yes", None, 1112, post),
                   _answer("a1", "usability", "most", None, "Compared", "compare", 1113, post),
                   _answer("a1", "usability", "comment", None, None, "Quick, but \"sale\" was odd.",
                           1114, post),
                   fx.SetSessionState("a1", SessionState.ENDED), at=1115)  # fmt: skip
        await step("ann",
                   _answer(None, "about-you", "often", None, "Every day", "daily", 1120, study),
                   _answer(None, "about-you", "where", None, "Telegram; The web", "telegram,web",
                           1121, study), at=1122)  # fmt: skip
        await step("bob", fx.RecordConsent(Consent.ACCEPTED), at=2000)
        await step("bob", fx.OpenSession("b1", "find-gift", "system-b", 0, "balanced", "2"),
                   at=2010)  # fmt: skip
        await step("bob", fx.RecordUserTurn("b1", 1, "hello"), at=2020)
        await step("bob", fx.RecordSystemTurn("b1", 1, None, 30000.0, "timeout"), at=2050)
        judged = fx.RecordEvent(EventKind.JUDGED, "b1", {"wizard": "ben", "success": False})
        await step("bob", fx.SetSuccess("b1", False), judged, at=2060)
        await step("bob", fx.CloseSession("b1", EndReason.PARTICIPANT_DONE, False),
                   fx.SetSessionState("b1", SessionState.QUESTIONNAIRE), at=2070)  # fmt: skip
        await step("bob",
                   _answer("b1", "usability", "u1", 3, "Somewhat disagree", None, 2080, post),
                   _answer("b1", "usability", "u2", 7, "Strongly agree", None, 2081, post),
                   _answer("b1", "usability", "done", 0, "No", None, 2082, post),
                   _answer("b1", "usability", "most", None, None, None, 2083, post, SKIPPED),
                   fx.SetSessionState("b1", SessionState.ENDED), at=2090)  # fmt: skip
        await step("bob",
                   _answer(None, "about-you", "often", None, "Every week", "weekly", 2100, study),
                   at=2101)  # fmt: skip
        await step("cat", fx.RecordConsent(Consent.DECLINED), at=3000)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def paper_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("paper") / "paper.sqlite"
    asyncio.run(write_paper_study(db))
    return db


@pytest.fixture(scope="module")
def csv_files(paper_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("csv")
    export_study(paper_db, out, wide=True)
    return out


def read(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{name}.csv", dtype=str, keep_default_na=False)


def test_wizard_turns_original_texts_and_actions(csv_files: Path) -> None:
    exchanges = read(csv_files, "exchanges")
    bob = exchanges[exchanges["session_id"] == "b1"].iloc[0]
    exchanges = exchanges[exchanges["session_id"] == "a1"].set_index("turn")
    assert list(exchanges.loc[["1", "2", "3"], "source"]) == ["system", "edited", "wizard"]
    assert exchanges.loc["2", "original_text"] == "Yes, it is on sale."
    assert exchanges.loc["2", "system_text"] == "Yes, 30% off until Sunday."
    assert exchanges.loc["3", "original_text"] == ""  # the system had said nothing
    assert list(exchanges.loc[["1", "2", "3"], "wizard"]) == ["", "ada", "ada"]
    assert (bob["error"], bob["system_text"]) == ("timeout", "")
    actions = read(csv_files, "wizard_actions")
    shown = actions[["session_id", "kind", "wizard", "turn", "text", "success"]]
    assert shown.to_numpy().tolist() == [
        ["a1", "wizard_note", "ada", "3", "hesitated before 'add'", ""],
        ["b1", "judged", "ben", "", "", "0"],
    ]  # fmt: skip
    assert set(actions["system_id"]) == {"system-a", "system-b"}
    assert actions["at_iso"].str.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$").all()


def test_every_column_has_a_type_and_a_meaning(csv_files: Path) -> None:
    columns = read(csv_files, "columns")
    assert (columns["meaning"].str.len() > 10).all(), columns[columns["meaning"].str.len() <= 10]
    assert set(columns["type"]) == {"string", "integer", "number", "time"}
    for table, described in columns.groupby("table", sort=False):
        header = (csv_files / f"{table}.csv").read_text(encoding="utf-8").splitlines()[0]
        assert header.split(",") == list(described["column"]), table
    assert set(columns["table"]) == {p.stem for p in csv_files.iterdir()}  # columns too


def test_the_codebook_names_scales_reverse_items_and_wide_columns(csv_files: Path) -> None:
    codebook = read(csv_files, "codebook").set_index("item_id")
    u2 = codebook.loc["usability.u2"]
    assert (u2["min"], u2["max"], u2["reverse"], u2["construct"]) == ("1", "7", "1", "usability")
    assert (
        u2["labels"].startswith("1=Strongly disagree; 2=Disagree")
        and "7=Strongly agree" in u2["labels"]
    )
    assert codebook.loc["usability.done", "labels"] == "1=Yes; 0=No"
    assert (
        codebook.loc["about-you.often", "labels"]
        == "daily=Every day; weekly=Every week; never=Never"
    )
    assert codebook.loc["usability.most", "required"] == "0"
    wide = read(csv_files, "responses_wide")
    assert {"usability.u1", "about_you.often", "reply.clear_t1"} <= set(wide.columns)
    assert set(codebook["variable"]) >= {"usability.u1", "about_you.often", "reply.clear"}
    values = read(csv_files, "codebook_values")
    assert values[values["item_id"] == "about-you.often"]["value"].tolist() == [
        "daily", "weekly", "never"
    ]  # fmt: skip


def test_wide_has_one_row_per_participant_and_session(csv_files: Path) -> None:
    wide = read(csv_files, "responses_wide")
    assert wide[["participant_id", "session_id"]].to_numpy().tolist() == [
        ["ann", "a1"],
        ["bob", "b1"],
    ]
    ann, bob = wide.iloc[0], wide.iloc[1]
    assert (ann["system_id"], ann["success"], bob["success"]) == ("system-a", "1", "0")
    assert (ann["usability.u1"], ann["usability.u2"], ann["usability.done"]) == ("6", "2", "1")
    assert (bob["usability.u1"], bob["usability.u2"], bob["usability.done"]) == ("3", "7", "0")
    assert (ann["usability.most"], bob["usability.most"]) == ("compare", "")  # bob skipped
    assert ann["usability.comment"] == 'Quick, but "sale" was odd.'
    assert (ann["reply.clear_t1"], ann["reply.clear_t2"], bob["reply.clear_t1"]) == ("6", "4", "")
    # post-study answers are the participant's, on each of their rows
    assert (ann["about_you.often"], bob["about_you.often"]) == ("daily", "weekly")
    where = [ann[f"about_you.where_{o}"] for o in ("telegram", "web", "phone")]
    assert where == ["1", "1", "0"] and bob["about_you.where_telegram"] == ""


def test_parquet_keeps_word_answers_and_every_type(paper_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "parquet"
    assert main(["export", "--db", str(paper_db), "--out", str(out), "--format", "parquet",
                 "--wide"]) == 0  # fmt: skip
    values = pd.read_parquet(out / "codebook_values.parquet")
    assert "daily" in set(values["value"])
    wide = pd.read_parquet(out / "responses_wide.parquet")
    assert wide["about_you.often"].tolist() == ["daily", "weekly"]
    assert wide["usability.u1"].tolist() == [6, 3]
    described = pd.read_parquet(out / "columns.parquet")
    arrow = {"string": "string", "integer": "int64", "number": "double",
             "time": "timestamp[us, tz=UTC]"}  # fmt: skip
    for table, group in described.groupby("table"):
        schema = pq.read_schema(out / f"{table}.parquet")
        for column, kind in zip(group["column"], group["type"], strict=True):
            assert str(schema.field(column).type) in (arrow[kind], f"large_{arrow[kind]}"), (
                table,
                column,
            )


def test_an_empty_database_keeps_every_columns_type(tmp_path: Path) -> None:
    db = tmp_path / "empty.sqlite"

    async def create() -> None:
        store = await open_store(db, lambda: 1.0)
        try:
            await store.record_definition("paper", definition_json(paper_bundle()))
        finally:
            await store.close()

    asyncio.run(create())
    out = tmp_path / "out"
    export_study(db, out, fmt="parquet", wide=True)
    exchanges = pq.read_schema(out / "exchanges.parquet")
    assert str(exchanges.field("error").type) in ("string", "large_string")
    assert str(exchanges.field("turn").type) == "int64"
    wide = pq.read_schema(out / "responses_wide.parquet")
    assert str(wide.field("about_you.often").type) in ("string", "large_string")
    assert str(wide.field("usability.u1").type) == "int64"
    assert pd.read_parquet(out / "sessions.parquet").empty


def test_answers_to_items_no_stored_definition_names_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "undefined.sqlite"
    asyncio.run(write_paper_study(db, define=False))
    out = tmp_path / "out"
    export_study(db, out, fmt="parquet", wide=True)
    wide = pd.read_parquet(out / "responses_wide.parquet")
    assert wide["usability.u1"].tolist() == [6, 3]  # numbers stay numbers
    assert wide["about_you.often"].tolist() == ["daily", "weekly"]
    described = pd.read_parquet(out / "columns.parquet").set_index("column")
    assert "not in the stored definition" in described.loc["usability.u1", "meaning"]


def test_sav_round_trips_with_variable_and_value_labels(paper_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "sav"
    export_study(paper_db, out, fmt="sav", wide=True)
    wide, meta = pyreadstat.read_sav(out / "responses_wide.sav")
    labels = meta.column_names_to_labels
    assert labels["usability.u2"] == "usability / usability.u2: The assistant was hard to use."
    assert labels["reply.clear_t2"] == "reply / reply.clear: The reply was clear. (about turn 2)"
    assert meta.variable_value_labels["usability.u1"] == {float(k): v for k, v in SEVEN.items()}
    assert meta.variable_value_labels["usability.done"] == {1.0: "Yes", 0.0: "No"}
    assert meta.variable_value_labels["about_you.often"] == {
        "daily": "Every day", "weekly": "Every week", "never": "Never"
    }  # fmt: skip
    assert meta.original_variable_types["usability.u1"] == "F8.0"
    assert wide["usability.u2"].tolist() == [2.0, 7.0]
    assert wide["about_you.often"].tolist() == ["daily", "weekly"]
    assert wide["participant_id"].tolist() == ["ann", "bob"]
    exchanges, meta = pyreadstat.read_sav(out / "exchanges.sav")
    assert "Yes, it is on sale." in set(exchanges["original_text"])
    assert meta.column_names_to_labels["wizard"].startswith("the experimenter")
    sessions, meta = pyreadstat.read_sav(out / "sessions.sav")
    assert meta.variable_value_labels["success"] == {1.0: "yes", 0.0: "no"}
    assert sessions["started_at_iso"].iloc[0] == datetime(1970, 1, 1, 0, 16, 50)
    assert meta.file_label == "ozlab paper: sessions"


def test_two_runs_give_the_same_bytes(
    paper_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    runs = []
    for run in ("first", "second"):
        for fmt in ("csv", "parquet", "sav"):
            export_study(paper_db, tmp_path / run / fmt, fmt=fmt, wide=True)
        runs.append({p.relative_to(tmp_path / run): hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in sorted((tmp_path / run).rglob("*.*"))})  # fmt: skip
    assert runs[0] == runs[1] and len(runs[0]) == 3 * 9  # nine tables in three formats
    _, meta = pyreadstat.read_sav(tmp_path / "first" / "sav" / "sessions.sav")
    assert meta.creation_time == datetime(2026, 1, 1, 0, 0, 0)


def test_stamping_refuses_a_file_that_is_not_spss(tmp_path: Path) -> None:
    other = tmp_path / "other.sav"
    other.write_bytes(b"PAR1" + bytes(200))
    with pytest.raises(StudyDataError, match="not an SPSS file"):
        stamp_sav(other, datetime(2026, 1, 1, tzinfo=UTC))
    assert other.read_bytes() == b"PAR1" + bytes(200)


def test_the_command_log_is_exported_with_what_the_bot_made_of_each(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"

    async def write() -> None:
        store = await open_store(db)
        try:
            note = await store.append_command("ada", CommandKind.NOTE, "p1-1", {"text": "typo"})
            gate = await store.append_command("ada", CommandKind.GATE, None, {"scope": "x:y"})
            await store.settle([fx.RecordCommand(gate, CommandOutcome.REJECTED)])
            assert note != gate
        finally:
            await store.close()

    asyncio.run(write())
    export_study(db, tmp_path / "out")
    rows = pd.read_csv(tmp_path / "out" / "commands.csv")
    assert list(rows["kind"]) == ["note", "gate"] and list(rows["wizard"]) == ["ada", "ada"]
    assert rows["outcome"].isna().tolist() == [True, False] and rows["outcome"][1] == "rejected"
    assert '"typo"' in rows["payload"][0] and rows["session_id"][0] == "p1-1"
