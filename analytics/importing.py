"""``ozlab import responses FILE.csv``: answers collected outside Telegram (paper forms,
another survey tool) added to the study database, so that they join the same report.

The file is the export's long format: one answer per row, with ``participant_id``,
``questionnaire_id``, ``item_id`` and ``value``, ``label`` or ``text``; optionally
``session_id``, ``system_id``, ``scope``, ``status``, ``turn``, ``stimulus_id``,
``shown_at`` and ``answered_at`` (Unix seconds). Other columns (the export's ``score``,
``moment``, ISO times, …) are ignored. Every row is checked against the stored study
definition (the item exists, the answer is on its scale) and every problem is reported
with its line number; then everything is written in one ``BEGIN IMMEDIATE`` transaction,
or nothing is.

Imported answers are marked by their scope, ``import:SYSTEM|ORIGINAL-SCOPE``, which also
carries the system for answers that have no Telegram session; an ``events`` row records
each import (file name, SHA-256, counts). New participants get the pseudonym given in the
file, which must look like one (letters and digits, at least one digit: ``P017``), never a
name.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics.import_rows import Problem, RowChecker
from bot.engine.journey import Journey, Stage
from scenarios.models import StudyBundle

__all__ = ["ImportResult", "Problem", "import_responses"]

_ALIASES = {
    "participant": "participant_id",
    "questionnaire": "questionnaire_id",
    "item": "item_id",
    "session": "session_id",
    "system": "system_id",
}
_REQUIRED = ("participant_id", "questionnaire_id", "item_id")
_PSEUDONYM = re.compile(r"^(?=.*[0-9])[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


@dataclass(frozen=True)
class ImportResult:
    study_id: str | None
    rows: int
    participants: int
    new_participants: int
    problems: tuple[Problem, ...]
    notes: tuple[str, ...] = ()


def import_responses(
    file: Path | str,
    db: Path | str,
    *,
    study: str | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> ImportResult:
    """Check every row of ``file`` and, when all are right, add them to ``db`` at once."""
    file, db = Path(file), Path(db)
    raw = file.read_bytes()
    new_file = not db.exists()
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA foreign_keys=ON")
        if new_file or not _has_tables(conn):
            from analytics.synthetic import create_schema

            create_schema(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = _run(conn, file, raw, study, clock())
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("ROLLBACK" if dry_run or result.problems else "COMMIT")
        return result
    finally:
        conn.close()


def _has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_master WHERE name='responses'").fetchone()[0]


def _run(conn: sqlite3.Connection, file: Path, raw: bytes, study: str | None, now: float):
    bundle, problem = _study(conn, study, now)
    if bundle is None:
        return ImportResult(None, 0, 0, 0, (Problem(0, problem),))
    study_id = bundle.study.id
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return ImportResult(study_id, 0, 0, 0, (Problem(0, f"not UTF-8 text ({error})"),))
    reader = csv.DictReader(text.splitlines(keepends=True))
    header = [_ALIASES.get(h.strip().lower(), h.strip().lower()) for h in reader.fieldnames or []]
    missing = [c for c in _REQUIRED if c not in header]
    if missing or not {"value", "label", "text"} & set(header):
        wanted = ", ".join(missing) or "value, label or text"
        return ImportResult(study_id, 0, 0, 0, (Problem(1, f"missing column(s): {wanted}"),))
    reader.fieldnames = header
    checker = RowChecker(bundle, _sessions(conn, study_id), now)
    people = dict(conn.execute("SELECT id, study_id FROM participants").fetchall())
    problems: list[Problem] = []
    rows: list[tuple[int, tuple[Any, ...]]] = []
    new: dict[str, int] = {}
    first: dict[tuple[str, str, str, str], int] = {}
    line = 1
    for record in reader:
        start, line = line + 1, reader.line_num
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue
        found, row = checker.check(record)
        person = row[0] if row else (record.get("participant_id") or "").strip()
        found += _participant(person, people, study_id, new, start)
        if row is not None and not found:
            key = (row[0], row[2], row[3], row[4])
            if key in first:
                found.append(f"the same answer is already on line {first[key]} of this file")
            first.setdefault(key, start)
        problems += [Problem(start, message) for message in found]
        if row is not None and not found:
            rows.append((start, row))
    if not rows and not problems:
        problems.append(Problem(0, "the file has no answers"))
    if problems:
        return ImportResult(study_id, 0, 0, 0, tuple(problems), checker.notes())
    state = Journey(participant="", stage=Stage.FINISHED, started_at=now, last_activity_at=now)
    for person in new:
        conn.execute(
            "INSERT INTO participants (id, study_id, chat_key, consent, consent_at, created_at,"
            " updated_at, state) VALUES (?, ?, NULL, 'accepted', NULL, ?, ?, ?)",
            (person, study_id, now, now, _finished(state, person)),
        )
    for start, row in rows:
        try:
            conn.execute(
                "INSERT INTO responses (participant_id, session_id, scope, questionnaire_id,"
                " item_id, value, label, text, status, shown_at, answered_at, turn,"
                " stimulus_id, attention_ok) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row,
            )
        except sqlite3.IntegrityError:
            problems.append(Problem(start, "this answer is already in the database"))
    if problems:
        return ImportResult(study_id, 0, 0, 0, tuple(problems), checker.notes())
    participants = len({row[0] for _, row in rows})
    data = {"file": file.name, "sha256": hashlib.sha256(raw).hexdigest(), "rows": len(rows)}
    data |= {"participants": participants, "new_participants": len(new)}
    conn.execute(
        "INSERT INTO events (at, participant_id, session_id, kind, data) VALUES (?, NULL, NULL,"
        " 'responses_imported', ?)",
        (now, json.dumps(data)),
    )
    return ImportResult(study_id, len(rows), participants, len(new), (), checker.notes())


def _finished(state: Journey, person: str) -> str:
    """The engine state of a participant who took part on paper: finished, so a bot that
    restarts on this database loads them and never writes to them."""
    from dataclasses import replace

    return replace(state, participant=person).to_json()


def _participant(
    person: str, people: dict[str, str], study_id: str, new: dict[str, int], line: int
) -> list[str]:
    if not person:
        return []
    if person in people:
        if people[person] != study_id:
            return [f"participant {person!r} belongs to study {people[person]!r}"]
        return []
    if not _PSEUDONYM.match(person):
        return [
            f"participant {person!r} does not look like a pseudonym: use a code such as "
            "P017 (letters, digits and . _ : -, with at least one digit), never a name"
        ]
    new.setdefault(person, line)
    return []


def _sessions(conn: sqlite3.Connection, study_id: str) -> dict[str, tuple[str, str]]:
    rows = conn.execute(
        "SELECT id, participant_id, system_id FROM sessions WHERE study_id = ?", (study_id,)
    ).fetchall()
    return {sid: (pid, system) for sid, pid, system in rows}


def _study(
    conn: sqlite3.Connection, study: str | None, now: float
) -> tuple[StudyBundle | None, str]:
    """The stored definition to check against; a shipped study or YAML file named with
    ``--study`` is stored first when the database has none of that id."""
    stored = dict(
        conn.execute(
            "SELECT study_id, definition FROM studies WHERE id IN"
            " (SELECT max(id) FROM studies GROUP BY study_id)"
        ).fetchall()
    )
    if study in stored or (study is None and len(stored) == 1):
        chosen = study or next(iter(stored))
        return StudyBundle.model_validate_json(stored[chosen]), ""
    if study is None:
        if stored:
            return None, f"this database holds several studies ({', '.join(stored)}): --study ID"
        return None, (
            "this database has no study definition: name the study with --study "
            "(a shipped study's name such as hmd, or its YAML file)"
        )
    from scenarios.loading import StudyError, load_study

    try:
        bundle = load_study(study)
    except (StudyError, FileNotFoundError, OSError) as error:
        return None, f"no study {study!r} in this database, and it cannot be loaded: {error}"
    definition = bundle.model_dump_json(by_alias=True)
    conn.execute(
        "INSERT INTO studies (study_id, loaded_at, definition, digest) VALUES (?, ?, ?, ?)",
        (bundle.study.id, now, definition, hashlib.sha256(definition.encode()).hexdigest()),
    )
    return bundle, ""
