"""An erased participant does not come back through an import: after ``ozlab erase``, the
export's answers taken before the erasure (``import responses``), a session under their
pseudonym (``import sessions``) and a vote by them or about their session (``import
votes``) are each refused, one line a row (status 3), and nothing of theirs is written. The
erasure ledger is what every import consults. As a researcher does it: simulated
participants through the real bot, then the commands and their files."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from bot.pilot.demo import play_study
from scenarios.loading import load_study
from tests.e2e_support import database_bytes

pytestmark = pytest.mark.slow  # whole commands: make test, not make check

STUDY = """\
id: back
title: Who may come back
texts:
  welcome: Welcome to our study.
  consent: We keep your answers under a code.
  declined: Thank you anyway.
systems:
  - {type: python, id: echo, entry: "bot.systems.examples.echo:Echo"}
  - {type: python, id: other, entry: "bot.systems.examples.echo:Echo"}
scenarios: [ask]
design: {type: random, seed: 1}
"""
SCENARIO = """\
id: ask
title: Ask anything
brief: Ask the system whatever you like.
max_exchanges: 2
post_task: [back-rating]
simulation:
  say: ["hello there", "and again"]
"""
QUESTIONNAIRE = """\
id: back-rating
title: About the system
items:
  - type: scale
    id: back-rating.useful
    text: The system was useful.
    min: 1
    max: 3
    labels: {1: Not at all, 2: Somewhat, 3: Very}
"""
VOTES = ["vote_id", "source", "rater", "system_a", "system_b", "winner", "question"]


def ozlab(*args: str) -> tuple[int, str, str]:
    """``ozlab ARGS`` in this process: its status, what it printed, what it told."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def played(folder: Path, participants: int) -> Path:
    """A small study written into ``folder`` and played by simulated participants through
    the real bot; its database."""
    (folder / "scenarios").mkdir()
    (folder / "questionnaires").mkdir()
    (folder / "scenarios" / "ask.yaml").write_text(SCENARIO)
    (folder / "questionnaires" / "back-rating.yaml").write_text(QUESTIONNAIRE)
    (folder / "study.yaml").write_text(STUDY)
    db = folder / "study.sqlite"
    asyncio.run(
        play_study(load_study(folder / "study.yaml"), db, participants=participants, seed=1)
    )
    return db


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def refused_lines(err: str, file: Path) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(f"{file}:")]


@pytest.fixture
def erased(tmp_path: Path) -> tuple[Path, str, str, Path]:
    """A study of two participants, a vote by the first about their own session, an export
    taken then; and the first erased after it. Returns the database, the erased one's
    pseudonym and session, and the export's folder."""
    db = played(tmp_path, participants=2)
    with sqlite3.connect(db) as conn:
        [(session, person)] = conn.execute(
            "SELECT id, participant_id FROM sessions ORDER BY id LIMIT 1"
        ).fetchall()
    vote = ["v1", "preference", person, "echo", "other", "a", "Which was better?"]
    votes = write_csv(tmp_path / "votes.csv", [[*VOTES, "session"], [*vote, session]])
    assert ozlab("import", "votes", str(votes), "--db", str(db))[0] == 0
    export = tmp_path / "export"
    assert ozlab("export", "--db", str(db), "--out", str(export))[0] == 0
    assert ozlab("erase", "--db", str(db), person)[0] == 0
    assert person.encode() not in database_bytes(db)
    return db, person, session, export


def test_the_export_taken_before_the_erasure_does_not_bring_them_back(
    erased: tuple[Path, str, str, Path], tmp_path: Path
) -> None:
    db, person, _, export = erased
    with (export / "responses.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    theirs = [rows[0], *(row for row in rows[1:] if person in row)]
    assert len(theirs) > 1
    file = write_csv(tmp_path / "theirs.csv", theirs)
    status, _, err = ozlab("import", "responses", str(file), "--db", str(db))
    assert status == 3
    lines = refused_lines(err, file)
    assert len(lines) == len(theirs) - 1  # one line a row
    assert all("erased" in line and "ledger" in line for line in lines)
    assert err.strip().splitlines()[-1].endswith("nothing was imported.")
    assert person.encode() not in database_bytes(db)


def test_a_session_under_their_pseudonym_is_refused(
    erased: tuple[Path, str, str, Path], tmp_path: Path
) -> None:
    db, person, session, _ = erased
    file = write_csv(
        tmp_path / "sessions.csv",
        [
            ["participant", "system", "scenario", "success"],
            [person, "echo", "ask", "true"],
            ["P900", "echo", "ask", "true"],
            ["P901", "echo", "ask", "false"],
        ],
    )
    file_with_session = write_csv(
        tmp_path / "session.csv",
        [
            ["participant", "session", "system", "scenario", "success"],
            ["P902", session, "echo", "ask", "true"],
        ],
    )
    for named, line in ((file, 2), (file_with_session, 2)):
        status, _, err = ozlab("import", "sessions", str(named), "--db", str(db))
        assert status == 3
        assert [s.split(": ")[0] for s in refused_lines(err, named)] == [f"{named}:{line}"]
        assert "erased" in err
    assert person.encode() not in database_bytes(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT count(*) FROM sessions WHERE participant_id LIKE 'P9%'"
        ).fetchone() == (0,)


def test_a_vote_by_them_or_about_their_session_is_refused(
    erased: tuple[Path, str, str, Path], tmp_path: Path
) -> None:
    db, person, session, _ = erased
    file = write_csv(
        tmp_path / "votes.csv",
        [
            [*VOTES, "session"],
            ["v1", "preference", person, "echo", "other", "a", "Which was better?", session],
            ["v2", "preference", person, "echo", "other", "b", "Which was better?", ""],
            ["v3", "preference", "P903", "echo", "other", "b", "Which was better?", session],
            ["v4", "acute", "A17", "echo", "other", "b", "Which was better?", f"P904-1~{session}"],
            ["v5", "preference", "P905", "echo", "other", "tie", "Which was better?", ""],
        ],
    )
    status, _, err = ozlab("import", "votes", str(file), "--db", str(db))
    assert status == 3
    lines = refused_lines(err, file)
    assert [line.split(": ")[0] for line in lines] == [f"{file}:{n}" for n in (2, 3, 4, 5)]
    assert all("erased" in line for line in lines)
    assert person.encode() not in database_bytes(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM votes").fetchone() == (0,)


def test_a_rating_of_their_conversation_is_refused(
    erased: tuple[Path, str, str, Path], tmp_path: Path
) -> None:
    db, _, session, _ = erased
    file = write_csv(
        tmp_path / "ratings.csv",
        [["target", "annotator", "item", "value"], [f"{session}#1", "A1", "useful", "2"]],
    )
    status, _, err = ozlab(
        "import", "annotations", str(file), "--db", str(db), "--instrument", "back-rating"
    )
    assert status == 3
    [line] = refused_lines(err, file)
    assert line.startswith(f"{file}:2: ") and "erased" in line
