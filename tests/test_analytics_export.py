"""``analytics export`` and ``ozlab import responses``: tidy files for R or SPSS, and the
way back: exported answers imported into a fresh database give the same statistics;
every problem of an import file is reported with its line, and nothing is written."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.data.synthetic import synthetic_bundle, write_synthetic_study
from analytics.io import export as export_module
from analytics.io.importing import import_responses
from analytics.report.numbers import build_report
from bot.cli import analytics_main as main
from bot.pilot.demo import play_study
from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from tests.store_reads import count, resumed, tables

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ITEM_STATS = ["system_id", "questionnaire_id", "item_id", "n", "mean", "sd", "median", "iqr"]


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("synthetic") / "synthetic.sqlite"
    write_synthetic_study(db, sessions=120, responses_per_session=30, seed=5, systems=3)
    return db


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    asyncio.run(play_study(load_study("hmd"), db, participants=6))
    return db


def fresh_db(path: Path, bundle_systems: int = 3) -> Path:
    """A new database that knows the study but holds no data."""

    async def create() -> None:
        store = await open_store(path, lambda: 1.0)
        try:
            bundle = synthetic_bundle(bundle_systems)
            await store.record_definition("synthetic", definition_json(bundle))
        finally:
            await store.close()

    asyncio.run(create())
    return path


def item_stats(db: Path) -> pd.DataFrame:
    items = build_report(load_study_data(db)).questionnaires.items[ITEM_STATS]
    items = items.astype({k: object for k in ITEM_STATS[:3]})
    return items.sort_values(ITEM_STATS[:3]).reset_index(drop=True)


def test_export_writes_tidy_files_with_a_codebook(demo_db: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "export"
    assert main(["export", "--db", str(demo_db), "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"sessions.csv", "exchanges.csv", "responses.csv", "codebook.csv"} <= names
    responses = pd.read_csv(out / "responses.csv", encoding="utf-8")
    assert responses.columns[0] == "response_id"  # no index column
    assert len(responses) == count(demo_db, "responses")
    assert (
        responses["answered_at_iso"].dropna().str.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$").all()
    )
    first = responses.dropna(subset=["value"]).iloc[0]
    assert float(first["value"]).is_integer()
    sessions = pd.read_csv(out / "sessions.csv")
    assert set(sessions["system_id"]) <= {"shop-v0", "shop-v1"}
    codebook = pd.read_csv(out / "codebook.csv")
    understanding = codebook.set_index("item_id").loc["hmd.understanding"]
    assert understanding["labels"].startswith("1=Completely disagree; 2=Disagree")
    assert (understanding["min"], understanding["max"], understanding["reverse"]) == (1, 5, 0)
    assert "Understanding" in understanding["text"]
    exchanges = (out / "exchanges.csv").read_text(encoding="utf-8")
    assert "user_text" in exchanges.splitlines()[0]


def test_export_then_import_gives_the_same_item_statistics(synthetic_db, tmp_path) -> None:
    out = tmp_path / "export"
    export_module.export_study(synthetic_db, out)
    fresh = fresh_db(tmp_path / "fresh.sqlite")
    result = import_responses(out / "responses.csv", fresh)
    assert result.problems == ()
    assert result.rows == count(synthetic_db, "responses")
    assert result.new_participants == result.participants > 0
    pd.testing.assert_frame_equal(item_stats(synthetic_db), item_stats(fresh))
    report = build_report(load_study_data(fresh))
    assert report.participation.overall["imported_answers"] == result.rows
    assert any("imported from a file" in note for note in report.notes)
    [event] = tables(fresh)["events"]
    assert event["kind"] == "responses_imported"
    assert json.loads(event["data"])["rows"] == result.rows
    # a bot restarting on this database leaves the participants on paper alone
    assert resumed(fresh, "synthetic") == []
    imported = tables(fresh)["responses"]
    assert {(r["origin"], r["moment"]) for r in imported} <= {
        ("import", "post_task"),
        ("import", "exchange"),
        ("import", "post_study"),
    }
    # the same file again: every row is already there, and nothing changes
    again = import_responses(out / "responses.csv", fresh)
    assert again.problems and again.problems[0].message == "this answer is already in the database"
    assert count(fresh, "responses") == result.rows and count(fresh, "events") == 1


def test_import_problems_come_with_line_numbers_and_write_nothing(tmp_path: Path) -> None:
    db = fresh_db(tmp_path / "study.sqlite")
    bad = tmp_path / "paper.csv"
    bad.write_text(
        "participant,questionnaire_id,item_id,value,label,text,system\n"
        "P001,idial,idial.s1,4,,,system-a\n"  # 2: fine
        "Ann Smith,idial,idial.s1,2,,,system-a\n"  # 3: a name
        "P002,idial,idial.s99,1,,,system-a\n"  # 4: no such item
        "P003,idial,idial.s2,7,,,system-a\n"  # 5: off the scale
        'P004,synthetic-post,synthetic-post.comment,,,"two\nlines",system-a\n'  # 6-7: fine
        "P005,idial,idial.s3,,Often,,system-z\n"  # 8: unknown system
        "P006,idial,idial.s3,2,Always,,system-b\n"  # 9: value and label disagree
        "P001,idial,idial.s1,3,,,system-a\n"  # 10: the same answer as line 2
        "P007,nope,nope.q1,1,,,system-a\n",  # 11: unknown questionnaire
        encoding="utf-8",
    )
    result = import_responses(bad, db)
    lines = [p.line for p in result.problems]
    assert lines == [3, 4, 5, 8, 9, 10, 11], result.problems
    messages = " | ".join(p.message for p in result.problems)
    for words in ("not look like a pseudonym", "no item 'idial.s99'", "not on the scale",
                  "no system 'system-z'", "the label says 'Always'", "already on line 2",
                  "no questionnaire 'nope'"):  # fmt: skip
        assert words in messages
    assert count(db, "responses") == 0 and count(db, "participants") == 0


def test_paper_answers_join_the_report_of_a_bot_study(demo_db, tmp_path, capsys) -> None:
    db = tmp_path / "demo.sqlite"
    db.write_bytes(demo_db.read_bytes())
    first = tables(db)["sessions"][0]
    pid, sid = first["participant_id"], first["session_id"]
    paper = tmp_path / "paper.csv"
    rows = [["participant_id", "questionnaire_id", "item_id", "value", "label", "text",
             "system_id", "session_id", "answered_at"]]  # fmt: skip
    when = "2025-06-01T10:00:00Z"
    for person in ("P101", "P102"):
        rows += [[person, "hmd", "hmd.understanding", "", "Agree", "", "shop-v1", "", when],
                 [person, "hmd", "hmd.usefulness", "5", "", "", "shop-v1", "", ""]]  # fmt: skip
    rows.append([pid, "hmd", "hmd.comment", "", "", "Also tried it on paper.", "", sid, ""])
    with paper.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    code = main(["import", "responses", str(paper), "--db", str(db), "--dry-run"])
    assert code == 0 and "would be imported" in capsys.readouterr().out
    assert count(db, "responses") == count(demo_db, "responses")
    assert main(["import", "responses", str(paper), "--db", str(db)]) == 0
    assert "5 answers of 3 participants imported (2 new participants)" in capsys.readouterr().out
    report = build_report(load_study_data(db))
    items = report.questionnaires.items.astype({"system_id": object, "item_id": object})
    before = build_report(load_study_data(demo_db)).questionnaires.items
    usefulness = items[(items["system_id"] == "shop-v1") & (items["item_id"] == "hmd.usefulness")]
    old = before[(before["system_id"] == "shop-v1") & (before["item_id"] == "hmd.usefulness")]
    assert int(usefulness["n"].iloc[0]) == int(old["n"].sum()) + 2
    assert "Also tried it on paper." in set(report.comments["text"])
    assert report.participation.overall["imported_participants"] == 3
    flagged = set(
        report.quality.flags.loc[report.quality.flags["flag"] == "too_fast", "participant_id"]
    )
    assert not {"P101", "P102"} & flagged  # no timing on paper is not "too fast"


def test_import_into_a_new_database_names_the_study(tmp_path: Path, capsys) -> None:
    paper = tmp_path / "paper.csv"
    paper.write_text(
        "participant,questionnaire,item,value\nP1,hmd,hmd.generation,4\n", encoding="utf-8"
    )
    db = tmp_path / "new.sqlite"
    assert main(["import", "responses", str(paper), "--db", str(db)]) == 3
    assert "--study" in capsys.readouterr().err
    assert main(["import", "responses", str(paper), "--db", str(db), "--study", "hmd"]) == 0
    data = load_study_data(db)
    assert list(data.bundles) == ["hmd"] and len(data.responses) == 1


def test_parquet_export_or_a_clear_message(synthetic_db, tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "parquet"  # pyarrow is in the test extra: this part runs everywhere
    assert (
        main(["export", "--db", str(synthetic_db), "--out", str(out), "--format", "parquet"]) == 0
    )
    responses = pd.read_parquet(out / "responses.parquet")
    assert len(responses) == count(synthetic_db, "responses")
    assert str(responses["answered_at_iso"].dtype).startswith("datetime64")
    monkeypatch.setattr(export_module.importlib.util, "find_spec", lambda name: None)
    code = main(["export", "--db", str(synthetic_db), "--out", str(out), "--format", "parquet"])
    assert code == 3 and "pip install pyarrow" in capsys.readouterr().err
