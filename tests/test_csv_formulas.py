"""What a participant (or a system echoing them) types reaches the researcher's spreadsheet
as text, never as a formula: every CSV ozlab writes puts a ``'`` before a text cell that
begins with ``= + - @``, a tab or a carriage return; numbers stay numbers; ``--raw-csv``,
Parquet and ``.sav`` keep the text as typed, and the export's responses import back as
typed. The data go the real way: simulated participants through the real bot, an echoing
system, an annotator's file through ``ozlab import annotations``, a Prolific id through
``/start``; each command as a researcher types it (run in this process where only what
it writes is tested)."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bot.cli import main
from bot.core.privacy import SECRET_ENV
from bot.pilot.demo import play_study
from bot.pilot.emulator import BotApiEmulator
from scenarios.loading import load_study
from scenarios.models import Recruitment, StudyBundle
from tests.conftest import SECRET, StartBot
from tests.e2e_support import PROJECT_ROOT

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

OZLAB = str(Path(sys.executable).with_name("ozlab"))
HYPERLINK = '=HYPERLINK("http://evil.example","x")'
TYPED = (HYPERLINK, "+1+1", "-1+cmd", "@SUM(1,1)", "\t=1+1")
COMMENT = "@SUM(1,1)"
RATED = "-2+cmd|' /C calc'!A0"

STUDY = """\
id: sheet
title: What participants type
texts:
  welcome: Welcome to our study.
  consent: We keep your answers under a code.
  declined: Thank you anyway.
systems:
  - {type: python, id: echo, entry: "bot.systems.examples.echo:Echo", options: {prefix: ""}}
scenarios: [ask]
design: {type: random, seed: 1}
"""
SCENARIO = """\
id: ask
title: Ask anything
brief: Ask the system whatever you like.
max_exchanges: 5
post_task: [sheet-rating]
simulation:
  say: SAID
  comments: ["@SUM(1,1)"]
  comment_rate: 1.0
"""
QUESTIONNAIRE = """\
id: sheet-rating
title: About the system
items:
  - type: scale
    id: sheet-rating.useful
    text: The system was useful.
    min: -3
    max: 3
    labels: {-3: Not at all, -2: Hardly, -1: A little, 0: Neither, 1: Somewhat, 2: Mostly,
             3: Very}
  - type: text
    id: sheet-rating.comment
    text: Anything else to tell us?
    required: false
"""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def ozlab(*args: str) -> str:
    """``ozlab ARGS`` in this process (what it writes is what is tested, not the process):
    what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    assert status == 0, err.getvalue()
    return out.getvalue()


def write_study(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "questionnaires").mkdir()
    said = "[" + ", ".join(_yaml_string(t) for t in TYPED) + "]"
    (folder / "scenarios" / "ask.yaml").write_text(SCENARIO.replace("SAID", said))
    (folder / "questionnaires" / "sheet-rating.yaml").write_text(QUESTIONNAIRE)
    study = folder / "study.yaml"
    study.write_text(STUDY)
    return study


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


@pytest.fixture(scope="module")
def typed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two simulated participants who type formulas to a system that echoes them and answer
    the free-text item with one; an annotator's file rates an exchange with one."""
    folder = tmp_path_factory.mktemp("formulas")
    db = folder / "typed.sqlite"
    asyncio.run(play_study(load_study(write_study(folder / "study")), db, participants=2, seed=1))
    with sqlite3.connect(db) as conn:
        [(session,)] = conn.execute("SELECT id FROM sessions ORDER BY id LIMIT 1").fetchall()
    ratings = folder / "ratings.csv"
    with ratings.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["target", "annotator", "item", "value"])
        writer.writerow([f"{session}#1", "A1", "comment", RATED])
        writer.writerow([f"{session}#1", "A1", "useful", "-2"])
    ozlab("import", "annotations", str(ratings), "--db", str(db), "--instrument", "sheet-rating")
    return db


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def formulas(path: Path) -> list[str]:
    """The cells of ``path`` a spreadsheet would evaluate: beginning with = + - @, a tab or
    a carriage return, and not a plain number."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            cell
            for row in csv.reader(handle)
            for cell in row
            if cell.startswith(_FORMULA_START) and not _NUMBER.fullmatch(cell)
        ]


def test_every_csv_of_the_export_shows_formulas_as_text(typed_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    written = ozlab("export", "--db", str(typed_db), "--out", str(out), "--wide").split()
    files = [Path(p) for p in written]
    assert {p.name for p in files} >= {
        "exchanges.csv",
        "responses.csv",
        "responses_wide.csv",
        "annotation_ratings.csv",
        "codebook.csv",
        "codebook_values.csv",
        "columns.csv",
    }
    for path in files:
        assert formulas(path) == [], path.name
    exchanges = read_csv(out / "exchanges.csv")
    shown = {"'" + typed for typed in TYPED}
    assert {row["user_text"] for row in exchanges} == shown
    assert {row["system_text"] for row in exchanges} == shown  # the system echoed them
    comments = [r["text"] for r in read_csv(out / "responses.csv") if r["type"] == "text"]
    assert comments and set(comments) == {"'" + COMMENT}
    [wide] = {row["sheet_rating.comment"] for row in read_csv(out / "responses_wide.csv")}
    assert wide == "'" + COMMENT
    rated = {r["item_id"]: r["value"] for r in read_csv(out / "annotation_ratings.csv")}
    assert rated == {"sheet-rating.comment": "'" + RATED, "sheet-rating.useful": "-2"}
    # A scale's labels begin with its lowest point: text, so neutralised; codes are numbers.
    [useful, _] = read_csv(out / "codebook.csv")
    assert useful["labels"].startswith("'-3=Not at all; -2=Hardly")
    codes = [r["value"] for r in read_csv(out / "codebook_values.csv")]
    assert codes == ["-3", "-2", "-1", "0", "1", "2", "3"]
    values = [r["value"] for r in read_csv(out / "responses.csv") if r["type"] == "scale"]
    assert values and all(int(v) in range(-3, 4) for v in values)  # numbers, as they were
    columns = read_csv(out / "columns.csv")
    [said] = [r["meaning"] for r in columns if (r["table"], r["column"]) == ("columns", "type")]
    assert "starts with ' instead" in said and "--raw-csv" in said


def test_raw_csv_parquet_and_sav_keep_the_text_as_typed(typed_db: Path, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    ozlab("export", "--db", str(typed_db), "--out", str(raw), "--raw-csv")
    exchanges = read_csv(raw / "exchanges.csv")
    assert {row["user_text"] for row in exchanges} == set(TYPED)
    rated = {r["item_id"]: r["value"] for r in read_csv(raw / "annotation_ratings.csv")}
    assert rated["sheet-rating.comment"] == RATED
    for fmt in ("parquet", "sav"):
        out = tmp_path / fmt
        ozlab("export", "--db", str(typed_db), "--out", str(out), "--format", fmt)
        read = pd.read_parquet if fmt == "parquet" else pd.read_spss
        frame = read(out / f"exchanges.{fmt}")
        assert set(frame["user_text"]) == set(TYPED), fmt
        assert set(frame["system_text"]) == set(TYPED), fmt
        comments = read(out / f"annotation_ratings.{fmt}")
        assert RATED in set(comments["value"]), fmt


PARQUET_RAW = ("--format", "parquet", "--raw-csv")


def test_raw_csv_goes_with_csv_only(typed_db: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [OZLAB, "export", "--db", str(typed_db), "--out", str(tmp_path / "x"), *PARQUET_RAW],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_ROOT,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr.strip().count("\n") == 0 and "--raw-csv" in done.stderr
    assert not (tmp_path / "x").exists()


def test_the_exported_answers_import_back_as_typed(typed_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    ozlab("export", "--db", str(typed_db), "--out", str(out))
    fresh = tmp_path / "fresh.sqlite"
    study = typed_db.parent / "study" / "study.yaml"
    ozlab(
        "import", "responses", str(out / "responses.csv"), "--db", str(fresh), "--study", str(study)
    )
    with sqlite3.connect(fresh) as conn:
        found = conn.execute(
            "SELECT text FROM responses WHERE item_id = 'sheet-rating.comment'"
        ).fetchall()
    assert found and {text for (text,) in found} == {COMMENT}


PROLIFIC_ID = "-1-A1"


async def test_a_platform_id_that_reads_as_a_formula_is_paid_as_text(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    tmp_path: Path,
) -> None:
    recruitment = Recruitment(completion_code="C1A2B3C4", declined_code="NOCONSENT7")
    bundle = hmd.model_copy(
        update={"study": hmd.study.model_copy(update={"recruitment": recruitment})}
    )
    bot = await start_bot(bundle)
    p = emulator.participant(901)
    await p.send_text(f"/start pid_{PROLIFIC_ID}")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I do not agree")
    await p.wait_for_text("NOCONSENT7")
    await bot.stop()
    out = tmp_path / "payments.csv"
    done = await asyncio.to_thread(
        subprocess.run,
        [OZLAB, "export", "payments", "--db", str(bot.db), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT_ROOT,
        check=False,
        env=os.environ | {SECRET_ENV: SECRET},
    )
    assert done.returncode == 0, done.stderr
    [row] = read_csv(out)
    assert row["platform_id"] == "'" + PROLIFIC_ID
    assert formulas(out) == []
