"""What a study database holds that is not a simulation's, and whether a program that is not
ozlab has it open: the two things a demo or a pilot asks before it replaces a file.

Read without writing. Every table is accounted for: a simulation writes participants marked
simulated and what hangs on them (sessions, exchanges, answers, events, their votes), the
bot's own bookkeeping (inbox, definitions, commands, gates, the sequence, the register of
files written), nothing else. Anything else is somebody's work (invitation codes, payments,
annotation jobs, annotators and their ratings, anyone else's votes, stress tests, model
judges' calls and judgements, a count of withdrawals, the ledger of erasures that backups
still need) and so is a table this ozlab does not know (a newer one's): its rows are counted
as such.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.core.errors import StoreError
from bot.store.connection import SCHEMA_VERSION, connect, schema_version, too_new
from bot.store.sql import Sql

_BOOKKEEPING = {
    "studies",
    "inbox",
    "commands",
    "gates",
    "sequence",
    "sqlite_sequence",
    "written_files",
    "experimenters",
    "sign_in_links",
}
_ON_PARTICIPANTS = {"sessions", "exchanges", "responses", "events"}
"""Rows that hang on participants (counted through them: a foreign key, or erased with them)."""
_ON_THEIR_PARENT = {
    "annotation_targets",
    "annotation_assignments",
    "stress_replays",
    "stress_verdicts",
}
"""Rows that cannot exist without a row of a table counted below (foreign keys)."""
_WORK = {
    "invitations": ("invitation code", "invitation codes"),
    "annotation_jobs": ("annotation job", "annotation jobs"),
    "annotators": ("annotator", "annotators"),
    "annotations": ("rating by annotators", "ratings by annotators"),
    "stress_tests": ("stress test", "stress tests"),
    "judge_calls": ("call to a model judge", "calls to model judges"),
    "judgements": ("judgement by a model judge", "judgements by model judges"),
    "erasures": ("erasure in its ledger", "erasures in its ledger"),
}
"""Somebody's work, in the order a refusal lists it (tables not known here come after)."""


def _counted(n: int, words: tuple[str, str]) -> str:
    return f"{n} {words[0] if n == 1 else words[1]}"


def not_simulated(path: str | Path) -> list[str]:
    """What ``path`` holds besides simulated participants, in words (``["14 participants
    who are not simulated", "3 invitation codes"]``); empty when nothing. A file that is not
    an ozlab database, or a newer ozlab's, is refused."""
    try:
        conn = connect(path, read_only=True)
    except StoreError:
        raise StoreError(
            f"{path} exists and is not an ozlab database; choose another --db"
        ) from None
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise too_new(version, path)
        return _holdings(conn, path)
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{path} cannot be read ({error}); choose another --db") from error
    finally:
        conn.close()


def _holdings(conn: sqlite3.Connection, path: str | Path) -> list[str]:
    tables = {
        name
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith("sqlite_stat")
    }
    if "participants" not in tables:
        raise StoreError(f"{path} exists and is not an ozlab database; choose another --db")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(participants)")}
    annotators = {row[1] for row in conn.execute("PRAGMA table_info(annotators)")}
    return held(
        conn,
        tables,
        simulated="simulated" in columns,
        simulated_annotators="simulated" in annotators,
    )


def held(
    conn: Sql, tables: set[str], *, simulated: bool = True, simulated_annotators: bool = True
) -> list[str]:
    """What a study's ``tables`` hold besides simulated participants and annotators, in
    words; ``simulated``, ``simulated_annotators``: whether they are marked so (a file from
    before pilots, or before simulated annotators: all are people)."""
    found: list[str] = []
    real = "simulated = 0" if simulated else "1=1"
    people = _one(conn, f"SELECT count(*) FROM participants WHERE {real}")
    if people:
        found.append(
            f"{people} participant{'' if people == 1 else 's'}"
            f" who {'is' if people == 1 else 'are'} not simulated"
        )
    if "withdrawals" in tables:
        withdrew = _one(conn, "SELECT coalesce(sum(count), 0) FROM withdrawals")
        if withdrew:
            found.append(_counted(withdrew, ("withdrawal counted", "withdrawals counted")))
    if "payments" in tables:
        paid = _one(
            conn,
            "SELECT count(*) FROM payments WHERE participant_id IS NULL OR participant_id"
            " NOT IN (SELECT id FROM participants WHERE simulated = 1)"
            if simulated
            else "SELECT count(*) FROM payments",
        )
        if paid:
            found.append(_counted(paid, ("payment record", "payment records")))
    marked = simulated_annotators and "annotators" in tables
    if "votes" in tables:
        ours = ["rater_kind = 'participant' AND rater IN (SELECT id FROM participants"
                " WHERE simulated = 1)"] if simulated else []  # fmt: skip
        if marked:
            ours.append(f"rater_kind = 'annotator' AND rater IN ({_SIMULATED_ANNOTATORS})")
        others = _one(
            conn,
            "SELECT count(*) FROM votes"
            + (f" WHERE NOT (({') OR ('.join(ours)}))" if ours else ""),
        )
        if others:
            found.append(_counted(others, ("vote", "votes")))
    known = {"participants", "withdrawals", "payments", "votes", "store_version"}
    known |= {*_BOOKKEEPING, *_ON_PARTICIPANTS}
    known |= _ON_THEIR_PARENT
    for table in sorted(
        tables - known, key=lambda t: (list(_WORK).index(t) if t in _WORK else len(_WORK), t)
    ):
        quoted = table.replace('"', '""')  # a name the file itself listed
        everything = f'SELECT count(*) FROM "{quoted}"'
        rows = _one(conn, _ANNOTATION_WORK.get(table, everything) if marked else everything)
        if rows:
            found.append(_counted(rows, _WORK.get(table, (f"row in {table}", f"rows in {table}"))))
    return found


_SIMULATED_ANNOTATORS = "SELECT id FROM annotators WHERE simulated = 1"
_ANNOTATION_WORK = {
    "annotation_jobs": (
        "SELECT count(*) FROM annotation_jobs j WHERE NOT EXISTS (SELECT 1 FROM annotators"
        " a WHERE a.job = j.job) OR EXISTS (SELECT 1 FROM annotators a WHERE a.job = j.job"
        " AND a.simulated = 0)"
    ),
    "annotators": "SELECT count(*) FROM annotators WHERE simulated = 0",
    "annotations": (
        f"SELECT count(*) FROM annotations WHERE annotator NOT IN ({_SIMULATED_ANNOTATORS})"
    ),
}
"""Annotation work that is somebody's: a job worked on by a person or by nobody yet, the
annotators who are people, and their ratings: where annotators can be marked simulated,
these count only what is not a simulation's."""


def _one(conn: Sql, query: str) -> int:
    row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


def open_elsewhere(path: str | Path) -> bool:
    """Whether a SQLite connection of another program has ``path`` open (the sqlite3
    shell, a database browser, an older ozlab): in WAL mode an open connection keeps a
    shared lock on the file, so an exclusive one cannot be had. Asked only of a file about
    to be removed: the attempt writes nothing, but may checkpoint the WAL on closing."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    except sqlite3.Error:
        return True
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError:
        return True
    finally:
        conn.close()
    return False
