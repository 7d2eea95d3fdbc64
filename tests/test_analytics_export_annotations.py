"""``ozlab export`` with the annotators' ratings: a study written here, ratings brought in
through ``ozlab import annotations`` (HRI CUES per exchange and overall, with a free-text
rationale; XRec yes/no with a third annotator), exported as CSV, Parquet and SPSS ``.sav``
(read back with its labels), the final values the report's own; a study without ratings
exports exactly the files it did before."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pyreadstat
import pytest

from analytics.data.loading import load_study_data
from analytics.io.export import export_study
from analytics.io.export_annotations import ANNOTATION_FINAL, ANNOTATION_RATINGS
from analytics.report.numbers import build_report
from bot.cli import analytics_main as main
from tests.annotation_support import stored_study

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ONE = "p0123456789abcde-1"  # a session with the companion, 3 exchanges
TWO = "pfedcba987654321-1"  # a session with another system, 2 exchanges
PLAIN = {"codebook", "codebook_values", "columns", "commands", "exchanges", "responses",
         "sessions", "wizard_actions"}  # fmt: skip
EPOCH = 1767225600  # 2026-01-01


def _import(db: Path, tmp_path: Path, name: str, rows: str, *args: str) -> None:
    file = tmp_path / f"{name}.csv"
    file.write_text(rows, encoding="utf-8")
    assert main(["import", "annotations", str(file), "--db", str(db), *args]) == 0


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("annotated")
    sessions = [(ONE, "companion", 3), (TWO, "other", 2)]
    db = stored_study(folder / "study.sqlite", "hri-cues", "hri-cues-chat", sessions)
    exchanges = "target,annotator,item,value\n" + "".join(
        f"{target},{annotator},exchange,{value}\n"
        for annotator, values in {"A1": "45323", "A2": "44322", "A3": "35323"}.items()
        for target, value in zip(
            [f"{ONE}#1", f"{ONE}#2", f"{ONE}#3", f"{TWO}#1", f"{TWO}#2"], values, strict=True
        )
    )
    _import(db, folder, "exchanges", exchanges, "--instrument", "hri-cues", "--job", "hri-cues")
    overall = (
        "target,annotator,item,value\n"
        f"{ONE},A1,overall,4\n{ONE},A2,overall,5\n{ONE},A3,overall,3\n"
        f"{TWO},A1,overall,2\n{TWO},A2,overall,2\n{TWO},A3,overall,1\n"
        f'{ONE},A1,rationale,"Smooth, she laughed"\n'
    )
    _import(db, folder, "overall", overall, "--instrument", "hri-cues-overall", "--job", "hri-cues")
    xrec = (
        "target,annotator,item,value,round\n"
        f"{ONE}#1,B1,q1_recommendation_rate,1,first\n{ONE}#1,B2,q1_recommendation_rate,1,first\n"
        f"{ONE}#2,B1,q1_recommendation_rate,1,first\n{ONE}#2,B2,q1_recommendation_rate,0,first\n"
        f"{ONE}#2,B3,q1_recommendation_rate,0,adjudication\n"
    )
    _import(db, folder, "xrec", xrec, "--instrument", "xrec-exchange", "--job", "xrec")
    return db


@pytest.fixture(scope="module")
def csv_files(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("csv")
    export_study(db, out, wide=True)
    return out


def read(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / f"{name}.csv", dtype=str, keep_default_na=False)


def test_every_rating_is_a_row_with_its_target_and_wording(csv_files: Path) -> None:
    ratings = read(csv_files, "annotation_ratings")
    assert list(ratings.columns) == [c.name for c in ANNOTATION_RATINGS]
    assert len(ratings) == 15 + 7 + 5
    first = ratings[(ratings["target"] == f"{ONE}#1") & (ratings["annotator"] == "A1")].iloc[0]
    assert (first["job"], first["level"], first["session_id"], first["turn"]) == (
        "hri-cues", "exchange", ONE, "1"
    )  # fmt: skip
    assert (first["system_id"], first["scenario_id"], first["value"]) == (
        "companion", "hri-cues-chat", "4"
    )  # fmt: skip
    assert first["label"] == "High enjoyment — Smooth and effortless interaction"
    assert (first["round"], first["origin"], first["item_id"]) == (
        "first", "import", "hri-cues.exchange"
    )  # fmt: skip
    assert first["recorded_at_iso"].endswith("Z") and float(first["recorded_at"]) > 0
    why = ratings[ratings["item_id"] == "hri-cues-overall.rationale"].iloc[0]
    assert (why["value"], why["label"], why["turn"]) == ("Smooth, she laughed", "", "")
    third = ratings[ratings["round"] == "adjudication"]
    assert third[["annotator", "value", "label"]].to_numpy().tolist() == [["B3", "0", "No"]]


def test_final_values_are_the_reports(db: Path, csv_files: Path) -> None:
    final = read(csv_files, "annotation_final")
    assert list(final.columns) == [c.name for c in ANNOTATION_FINAL]
    by = final.set_index(["item_id", "target"])
    xrec = by.loc["xrec-exchange.q1_recommendation_rate"]
    assert xrec.loc[f"{ONE}#1", ["value", "how", "label"]].tolist() == ["1", "agreed", "Yes"]
    assert xrec.loc[f"{ONE}#2", ["value", "how", "n_ratings"]].tolist() == [
        "0", "third annotator", "3"
    ]  # fmt: skip
    overall = by.loc["hri-cues-overall.overall"]
    assert overall.loc[ONE, ["value", "score", "how"]].tolist() == ["4", "4.0", "median"]
    assert overall.loc[TWO, ["value", "how", "system_id"]].tolist() == ["2", "majority", "other"]
    assert "hri-cues-overall.rationale" not in set(final["item_id"])  # free text: no final
    report = build_report(load_study_data(db)).annotations
    assert report is not None
    expected = report.final_values
    assert final["target"].tolist() == expected["target"].astype(str).tolist()
    assert final["item_id"].tolist() == expected["item"].astype(str).tolist()
    assert final["how"].tolist() == expected["how"].astype(str).tolist()
    assert final["value"].tolist() == [v or "" for v in expected["value"]]


def test_wide_has_one_row_per_target_and_one_column_per_item(csv_files: Path) -> None:
    wide = read(csv_files, "annotation_final_wide")
    assert {"hri_cues.exchange", "hri_cues_overall.overall",
            "xrec_exchange.q1_recommendation_rate"} <= set(wide.columns)  # fmt: skip
    assert len(wide) == len(wide[["job", "level", "target"]].drop_duplicates()) == 5 + 2 + 2
    row = wide[(wide["job"] == "xrec") & (wide["target"] == f"{ONE}#2")].iloc[0]
    assert (row["xrec_exchange.q1_recommendation_rate"], row["hri_cues.exchange"]) == ("0", "")
    exchanges = wide[wide["job"] == "hri-cues"].set_index("target")["hri_cues.exchange"]
    assert exchanges[[f"{ONE}#1", f"{TWO}#1"]].tolist() == ["4.0", "2.0"]  # majority, agreed
    columns = read(csv_files, "columns")
    for table in ("annotation_ratings", "annotation_final", "annotation_final_wide"):
        described = columns[columns["table"] == table]
        header = (csv_files / f"{table}.csv").read_text(encoding="utf-8").splitlines()[0]
        assert header.split(",") == list(described["column"]), table
        assert (described["meaning"].str.len() > 10).all(), table


def test_parquet_keeps_every_declared_type(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "parquet"
    export_study(db, out, fmt="parquet", wide=True)
    described = pd.read_parquet(out / "columns.parquet")
    arrow = {"string": "string", "integer": "int64", "number": "double",
             "time": "timestamp[us, tz=UTC]"}  # fmt: skip
    for table in ("annotation_ratings", "annotation_final", "annotation_final_wide"):
        schema = pq.read_schema(out / f"{table}.parquet")
        group = described[described["table"] == table]
        for column, kind in zip(group["column"], group["type"], strict=True):
            assert str(schema.field(column).type) in (arrow[kind], f"large_{arrow[kind]}"), (
                table,
                column,
            )
    ratings = pd.read_parquet(out / "annotation_ratings.parquet")
    assert ratings["turn"].dropna().astype(int).tolist()[:3] == [1, 1, 1]


def test_sav_round_trips_with_variable_and_value_labels(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "sav"
    export_study(db, out, fmt="sav", wide=True)
    wide, meta = pyreadstat.read_sav(out / "annotation_final_wide.sav")
    labels = meta.column_names_to_labels
    assert labels["hri_cues_overall.overall"] == (
        "hri-cues-overall / hri-cues-overall.overall: Rate the overall user enjoyment of the "
        "entire interaction. (final value)"
    )
    values = meta.variable_value_labels
    assert values["xrec_exchange.q1_recommendation_rate"] == {1.0: "Yes", 0.0: "No"}
    assert values["hri_cues.exchange"][4.0] == "High enjoyment — Smooth and effortless interaction"
    assert sorted(wide["hri_cues_overall.overall"].dropna()) == [2.0, 4.0]
    assert meta.file_label == "ozlab hri-cues: annotation_final_wide"
    ratings, meta = pyreadstat.read_sav(out / "annotation_ratings.sav")
    assert meta.column_names_to_labels["annotator"].startswith("pseudonym of the annotator")
    assert meta.variable_value_labels["round"] == {
        "first": "first round", "adjudication": "adjudication"
    }  # fmt: skip
    assert "Smooth, she laughed" in set(ratings["value"])
    final, _ = pyreadstat.read_sav(out / "annotation_final.sav")
    assert set(final["how"]) == {"agreed", "third annotator", "majority", "median"}


def test_two_runs_give_the_same_bytes(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    runs = []
    for run in ("first", "second"):
        for fmt in ("csv", "parquet", "sav"):
            export_study(db, tmp_path / run / fmt, fmt=fmt, wide=True)
        runs.append({p.relative_to(tmp_path / run): hashlib.sha256(p.read_bytes()).hexdigest()
                     for p in sorted((tmp_path / run).rglob("*.*"))})  # fmt: skip
    assert runs[0] == runs[1] and len(runs[0]) == 3 * 12  # nine tables and three annotation


def test_a_study_without_ratings_exports_what_it_did(tmp_path: Path) -> None:
    sessions = [(ONE, "companion", 3)]
    db = stored_study(tmp_path / "plain.sqlite", "hri-cues", "hri-cues-chat", sessions)
    for fmt in ("csv", "sav"):
        written = export_study(db, tmp_path / fmt, fmt=fmt, wide=True)
        assert {p.stem for p in written} == PLAIN | {"responses_wide"}
    columns = read(tmp_path / "csv", "columns")
    assert not columns["table"].str.startswith("annotation").any()
