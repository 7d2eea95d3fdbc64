"""A formula never starts a row through a line break inside a cell: what a participant
types (and a system echoes), a free-text answer, an annotator's rating and an imported
vote's question hold a CR, LF, CRLF, U+2028 or U+0085 followed by a formula. Every CSV of
``ozlab export`` quotes each cell that holds a line break, and no line of it, however a
reader splits the file, begins with a formula; the export's answers and votes import back
as typed. The data go the real way: simulated participants through the real bot, the
imports and the export as a researcher types them."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from bot.pilot.demo import play_study
from scenarios.loading import load_study

pytestmark = pytest.mark.slow  # whole commands: make test, not make check

BREAKS = {"CR": "\r", "LF": "\n", "CRLF": "\r\n", "U+2028": "\u2028", "U+0085": "\x85"}
TYPED = (*(f"say{brk}=1+3" for brk in BREAKS.values()), "\r=1+3")
COMMENTS = tuple(f"fine{brk}@SUM(1,1)" for brk in BREAKS.values())
RATED = "ok\r\n-2+cmd|' /C calc'!A0"
QUESTION = "crq\r=2+5+cmd|' /C calc'!A0"
LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
FORMULA_START = ("=", "+", "-", "@", "\t")
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")

STUDY = """\
id: breaks
title: Line breaks
texts:
  welcome: Welcome to our study.
  consent: We keep your answers under a code.
  declined: Thank you anyway.
systems:
  - {type: python, id: echo, entry: "bot.systems.examples.echo:Echo", options: {prefix: ""}}
  - {type: python, id: other, entry: "bot.systems.examples.echo:Echo", options: {prefix: ""}}
scenarios: [ask]
design: {type: random, seed: 1}
"""
SCENARIO = """\
id: ask
title: Ask anything
brief: Ask the system whatever you like.
max_exchanges: 6
post_task: [breaks-rating]
simulation:
  say: SAID
  comments: COMMENTS
  comment_rate: 1.0
"""
QUESTIONNAIRE = """\
id: breaks-rating
title: About the system
items:
  - type: scale
    id: breaks-rating.useful
    text: The system was useful.
    min: 1
    max: 3
    labels: {1: Not at all, 2: Somewhat, 3: Very}
  - type: text
    id: breaks-rating.comment
    text: Anything else to tell us?
    required: false
"""


def ozlab(*args: str) -> str:
    """``ozlab ARGS`` in this process (what it writes is what is tested): what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    assert status == 0, err.getvalue()
    return out.getvalue()


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


@pytest.fixture(scope="module")
def broken_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("breaks")
    (folder / "scenarios").mkdir()
    (folder / "questionnaires").mkdir()
    scenario = SCENARIO.replace("SAID", json.dumps(TYPED)).replace(
        "COMMENTS", json.dumps(COMMENTS)
    )  # JSON strings are YAML's double-quoted ones, escapes and all
    (folder / "scenarios" / "ask.yaml").write_text(scenario)
    (folder / "questionnaires" / "breaks-rating.yaml").write_text(QUESTIONNAIRE)
    (folder / "study.yaml").write_text(STUDY)
    db = folder / "breaks.sqlite"
    asyncio.run(play_study(load_study(folder / "study.yaml"), db, participants=3, seed=1))
    with sqlite3.connect(db) as conn:
        [(session, person)] = conn.execute(
            "SELECT id, participant_id FROM sessions ORDER BY id LIMIT 1"
        ).fetchall()
    ratings = write_csv(
        folder / "ratings.csv",
        [["target", "annotator", "item", "value"], [f"{session}#1", "A1", "comment", RATED]],
    )
    ozlab("import", "annotations", str(ratings), "--db", str(db), "--instrument", "breaks-rating")
    votes = write_csv(
        folder / "votes.csv",
        [
            ["vote_id", "source", "rater", "system_a", "system_b", "winner", "question"],
            ["v1", "preference", person, "echo", "other", "a", QUESTION],
        ],
    )
    ozlab("import", "votes", str(votes), "--db", str(db))
    return db


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def unquoted_breaks(text: str) -> list[str]:
    """The line breaks outside quotes that do not end a row (ozlab ends rows with LF)."""
    found, quoted = [], False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and LINE_BREAK.match(char) and char != "\n":
            found.append(repr(text[max(0, index - 10) : index + 10]))
    return found


def formula_lines(text: str) -> list[str]:
    """What starts a line, after any line break, quoted or not, as a reader that ends a row
    at every break would read its first cell: not one may run."""
    starts = [0, *(match.end() for match in LINE_BREAK.finditer(text))]
    running = []
    for start in starts:
        cell = re.split(r'[,\n\r\x85\u2028"]', text[start:].removeprefix('"'), maxsplit=1)[0]
        if cell.startswith(FORMULA_START) and not NUMBER.fullmatch(cell):
            running.append(cell)
    return running


def test_no_line_of_any_exported_csv_starts_a_formula(broken_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    written = [
        Path(p)
        for p in ozlab("export", "--db", str(broken_db), "--out", str(out), "--wide").split()
    ]
    names = {path.name for path in written}
    assert {"exchanges.csv", "responses.csv", "responses_wide.csv", "votes.csv"} <= names
    assert "annotation_ratings.csv" in names
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert unquoted_breaks(text) == [], path.name
        assert formula_lines(text) == [], path.name
    exchanges = read_rows(out / "exchanges.csv")
    for column in ("user_text", "system_text"):  # the system echoed every one
        shown = {row[column] for row in exchanges}
        assert shown == {"say" + brk + "'=1+3" for brk in BREAKS.values()} | {"'\r'=1+3"}
    comments = {r["text"] for r in read_rows(out / "responses.csv") if r["type"] == "text"}
    assert comments and comments <= {"fine" + brk + "'@SUM(1,1)" for brk in BREAKS.values()}
    [rated] = [r["value"] for r in read_rows(out / "annotation_ratings.csv") if r["value"]]
    assert rated == "ok\r\n'-2+cmd|' /C calc'!A0"
    [vote] = read_rows(out / "votes.csv")
    assert vote["question"] == "crq\r'=2+5+cmd|' /C calc'!A0"


def test_the_exported_answers_and_votes_import_back_as_typed(
    broken_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "export"
    ozlab("export", "--db", str(broken_db), "--out", str(out))
    fresh = tmp_path / "fresh.sqlite"
    study = broken_db.parent / "study.yaml"
    ozlab(
        "import", "responses", str(out / "responses.csv"), "--db", str(fresh), "--study", str(study)
    )
    with sqlite3.connect(fresh) as conn:
        found = {
            text
            for (text,) in conn.execute(
                "SELECT text FROM responses WHERE item_id = 'breaks-rating.comment'"
            )
        }
    with sqlite3.connect(broken_db) as conn:
        typed = {
            text
            for (text,) in conn.execute(
                "SELECT text FROM responses WHERE item_id = 'breaks-rating.comment'"
            )
        }
    assert found == typed and typed <= set(COMMENTS)
    [vote] = read_rows(out / "votes.csv")
    votes = write_csv(
        tmp_path / "votes.csv",
        [
            ["vote_id", "source", "rater", "system_a", "system_b", "winner", "question"],
            ["again", vote["source"], vote["rater"], "other", "echo", "b", vote["question"]],
        ],
    )
    ozlab("import", "votes", str(votes), "--db", str(fresh))
    with sqlite3.connect(fresh) as conn:
        [(question,)] = conn.execute("SELECT question FROM votes").fetchall()
    assert question == QUESTION
