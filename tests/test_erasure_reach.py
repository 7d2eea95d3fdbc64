"""What an erasure cannot reach: the files ozlab wrote with participants' data before it.
An export's tables and a report are entered in the study's register of files written;
``ozlab erase`` then names each one still there (not one deleted meanwhile), with its kind,
for the researcher to delete or write again. As a researcher does it: simulated
participants through the real bot, then the commands and their files."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV
from tests.older_schema import as_of
from tests.test_import_erased import ozlab, played

pytestmark = pytest.mark.slow  # whole commands: make test, not make check

BEYOND = "written before this erasure, beyond its reach (delete it or write it again): "


def test_the_erasure_names_the_files_written_before_it(tmp_path: Path) -> None:
    db = played(tmp_path, participants=2)
    with sqlite3.connect(db) as conn:
        [(person,)] = conn.execute("SELECT id FROM participants ORDER BY id LIMIT 1").fetchall()

    status, printed, err = ozlab("export", "--db", str(db), "--out", str(tmp_path / "export"))
    assert status == 0 and "register" not in err
    exported = [Path(line) for line in printed.split()]
    report = tmp_path / "reports" / "report.md"
    assert ozlab("report", "--db", str(db), "--out", str(report))[0] == 0
    gone = tmp_path / "export" / "codebook.csv"
    gone.unlink()  # deleted by the researcher: nothing to name

    status, printed, _ = ozlab("erase", "--db", str(db), person)
    assert status == 0
    lines = printed.splitlines()
    assert lines[0].startswith(f"erased {person}: ")
    named = {line.removeprefix(BEYOND).rsplit(" (", 1)[0]: line for line in lines[1:]}
    assert set(named) == {str(p.resolve()) for p in [*exported, report] if p != gone}
    assert all(line.startswith(BEYOND) for line in lines[1:])
    assert re.search(r" \(report, \d{4}-\d\d-\d\d \d\d:\d\d UTC\)$", named[str(report.resolve())])
    assert " (export, " in named[str(exported[0].resolve())]


def test_a_study_the_register_cannot_take_still_gets_its_files(tmp_path: Path) -> None:
    """A file of an older ozlab is read, never upgraded, by an export: the files are written,
    and one line says they are not in the register."""
    db = played(tmp_path, participants=1)
    with sqlite3.connect(db) as conn:  # as ozlab wrote it before the register
        as_of(conn, 16)
    status, printed, err = ozlab("export", "--db", str(db), "--out", str(tmp_path / "export"))
    assert status == 0 and all(Path(p).is_file() for p in printed.split())
    [told] = [line for line in err.splitlines() if "register" in line]
    assert told.startswith("ozlab: ") and "not entered in the study's register" in told


def test_a_payments_file_is_named_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Platform ids are a person's data: the payments CSV is in the register (standard
    output is not a file, and is not)."""
    db, out = tmp_path / "study.sqlite", tmp_path / "payments.csv"
    invite = ("invite", "--db", str(db), "--n", "1", "--bot", "lab_bot")
    assert ozlab(*invite, "--out", str(tmp_path / "invitations.csv"))[0] == 0
    monkeypatch.setenv(SECRET_ENV, "a-secret-long-enough-for-ozlab")
    assert ozlab("export", "payments", "--db", str(db))[0] == 0
    assert ozlab("export", "payments", "--db", str(db), "--out", str(out))[0] == 0
    status, printed, _ = ozlab("erase", "--db", str(db), "P1")
    assert status == 0
    [told, named] = printed.splitlines()
    assert told == "nothing stored about P1"
    assert named.startswith(f"{BEYOND}{out.resolve()} (payments, ")
