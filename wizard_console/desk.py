"""The experimenter's side of the study database: read what the bot wrote, append commands.

The console and the bot are separate processes that meet in one SQLite file (WAL). This side
is plain synchronous sqlite3, which the console runs in worker threads:

- every read is one short snapshot, fetched in full and closed at once (a reader that keeps
  a transaction open stops the bot's checkpoints and the WAL grows without end);
- every write is a ``BEGIN IMMEDIATE`` transaction (a deferred one that reads first fails
  with "database is locked" beside a busy bot), with a busy timeout;
- ``PRAGMA data_version`` tells whether anyone committed since the last look: an idle
  console polling four times a second re-reads nothing.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wizard_console import sessions as rows
from wizard_console import transcript as lines
from wizard_console.model import COMMAND_KINDS, Gate, Line, LiveSession, WaitingReply

SCHEMA_VERSION = 5  # the migration that added commands and gates
BUSY_TIMEOUT_MS = 10_000


class DeskError(Exception):
    """A problem the experimenter can fix (wrong path, old database, bad command)."""


@dataclass
class _Snapshot:
    """Everything the sessions table needs, as of one ``data_version``."""

    participants: dict[str, rows.Participant] = field(default_factory=dict)
    sessions: dict[str, rows.SessionRow] = field(default_factory=dict)
    by_participant: dict[str, list[rows.SessionRow]] = field(default_factory=dict)
    gates: dict[str, Gate] = field(default_factory=dict)
    errors: dict[str, str | None] = field(default_factory=dict)  # participant -> last error
    counts: dict[str, int] | None = None  # exchanges per session, read only when needed


class Desk:
    """One experimenter's view of a study database, and their commands to the bot."""

    def __init__(self, db: Path, wizard: str, *, clock: Callable[[], float] = time.time) -> None:
        self.db = Path(db)
        self.wizard = wizard
        self._clock = clock
        if not self.db.is_file():
            raise DeskError(f"no study database at {self.db}: give the --db the bot runs with")
        self._conn = sqlite3.connect(
            f"file:{self.db}?mode=rw", uri=True, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()  # one connection, used from the console's threads
        try:
            self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as error:
            self._conn.close()
            raise DeskError(f"{self.db} is not a study database ({error})") from error
        if version < SCHEMA_VERSION:
            self._conn.close()
            raise DeskError(
                f"{self.db} has schema version {version}; the wizard console needs "
                f"{SCHEMA_VERSION}: start the bot (ozlab run) once on it to upgrade it"
            )
        self._version: int | None = None
        self._snap = _Snapshot()
        self._studies_id = 0
        self._studies: dict[str, rows.StudyInfo] = {}

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot, ended as soon as the rows are fetched."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def data_version(self) -> int:
        """Changes whenever another process (the bot) commits: nothing to re-read if not."""
        with self._lock:
            return self._conn.execute("PRAGMA data_version").fetchone()[0]

    def _snapshot(self) -> _Snapshot:
        version = self.data_version()
        if version == self._version:
            return self._snap
        old = self._snap
        new = _Snapshot()
        with self._reading() as conn:
            changed = []
            for pid, study, raw in conn.execute(
                "SELECT id, study_id, state FROM participants ORDER BY created_at, id"
            ).fetchall():
                before = old.participants.get(pid)
                if before is not None and before.raw == raw:
                    new.participants[pid] = before
                    new.errors[pid] = old.errors.get(pid)
                else:
                    new.participants[pid] = rows.Participant.parse(pid, study, raw)
                    changed.append(new.participants[pid])
            for row in conn.execute(
                "SELECT id, participant_id, study_id, scenario_id, system_id, state, started_at,"
                " ended_at FROM sessions ORDER BY started_at, id"
            ).fetchall():
                stored = new.sessions[row[0]] = rows.SessionRow(*row)
                new.by_participant.setdefault(stored.participant, []).append(stored)
            for scope, gated, auto, wizard, set_at in conn.execute(
                "SELECT scope, gated, auto_send_after, wizard, set_at FROM gates"
            ).fetchall():
                new.gates[scope] = Gate(scope, bool(gated), auto, wizard, set_at)
            new.errors.update(_last_errors(conn, changed))
            self._read_studies(conn)
        self._snap, self._version = new, version
        return new

    def _read_studies(self, conn: sqlite3.Connection) -> None:
        latest = conn.execute("SELECT coalesce(max(id), 0) FROM studies").fetchone()[0]
        if latest == self._studies_id:
            return
        for study_id, definition in conn.execute(
            "SELECT study_id, definition FROM studies"
            " WHERE id IN (SELECT max(id) FROM studies GROUP BY study_id)"
        ).fetchall():
            self._studies[study_id] = rows.StudyInfo.from_definition(definition)
        self._studies_id = latest

    def _counts(self, snap: _Snapshot) -> dict[str, int]:
        if snap.counts is None:
            with self._reading() as conn:
                snap.counts = dict(
                    conn.execute(
                        "SELECT session_id, count(system_text) FROM exchanges GROUP BY session_id"
                    ).fetchall()
                )
        return snap.counts

    def live_sessions(
        self,
        *,
        include_ended: bool = False,
        study: str | None = None,
        system: str | None = None,
        state: str | None = None,
    ) -> list[LiveSession]:
        """Every participant's current session (ended ones and past sessions only when
        asked), in the order participants arrived; filters match exactly."""
        snap = self._snapshot()
        now = self._clock()
        found: list[LiveSession] = []
        for p in snap.participants.values():
            info = self._studies.get(p.study, rows.StudyInfo())
            current = p.session_id if p.tasks else None
            if include_ended:
                counts = self._counts(snap)
                for row in snap.by_participant.get(p.id, ()):
                    if row.id != current:
                        found.append(rows.past_session(row, info, counts.get(row.id, 0)))
            stored = snap.sessions.get(current) if current else None
            found.append(
                rows.current_session(p, stored, info, snap.gates, snap.errors.get(p.id), now)
            )
        return [
            s
            for s in found
            if (include_ended or not s.ended)
            and study in (None, s.study)
            and system in (None, s.system)
            and state in (None, s.state)
        ]

    def waiting_replies(self) -> list[WaitingReply]:
        """Turns waiting for a wizard, oldest first: the queue that wizards share."""
        snap = self._snapshot()
        waiting = [rows.waiting_reply(p) for p in snap.participants.values()]
        return sorted((w for w in waiting if w is not None), key=lambda w: w.since)

    def gates(self) -> dict[str, Gate]:
        return dict(self._snapshot().gates)

    def knows(self, session_id: str) -> bool:
        """Whether a session of this id exists, or is the next one of a participant."""
        snap = self._snapshot()
        return session_id in snap.sessions or any(
            p.session_id == session_id for p in snap.participants.values()
        )

    def transcript(self, session_id: str, after: float | None = None) -> list[Line]:
        """The session's lines in time order; with ``after``, only the later ones."""
        with self._reading() as conn:
            exchanges = conn.execute(
                "SELECT id, turn, user_text, user_at, system_text, system_at, error, source,"
                " original_text, wizard FROM exchanges WHERE session_id = ? ORDER BY turn",
                (session_id,),
            ).fetchall()
            events = conn.execute(
                "SELECT id, at, kind, data FROM events WHERE session_id = ? ORDER BY id",
                (session_id,),
            ).fetchall()
            ended = conn.execute(
                "SELECT ended_at, end_reason FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        found = lines.exchange_lines(exchanges)
        found += [line for e in events if (line := lines.event_line(*e)) is not None]
        if ended is not None:
            found += lines.end_line(session_id, *ended)
        return lines.ordered(found, after)

    # --- commands ------------------------------------------------------------------------

    def command(self, kind: str, session_id: str | None = None, **payload: object) -> int:
        """Append a command for the bot (applied once, in order); returns its id."""
        if kind not in COMMAND_KINDS:
            raise DeskError(f"unknown command {kind!r}; one of {', '.join(sorted(COMMAND_KINDS))}")
        if session_id is None and kind != "gate":
            raise DeskError(f"the command {kind!r} needs a session")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._conn.execute(
                    "INSERT INTO commands (at, wizard, kind, session_id, payload)"
                    " VALUES (?,?,?,?,?)",
                    (self._clock(), self.wizard, kind, session_id, json.dumps(payload)),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def gate(self, scope: str, on: bool, auto_send_after: float | None = None) -> int:
        """Gate (or ungate) ``session:<id>``, ``system:<id>`` or ``study:<id>``."""
        kind, _, target = scope.partition(":")
        if kind not in ("session", "system", "study") or not target:
            raise DeskError(f"{scope!r} is not session:<id>, system:<id> or study:<id>")
        if kind == "session":
            return self.command("gate", target, on=on, auto_send_after=auto_send_after)
        return self.command("gate", None, scope=scope, on=on, auto_send_after=auto_send_after)

    def outcome(self, command_id: int) -> str | None:
        """applied, expired or rejected once the bot has dealt with it; None until then."""
        return self.outcomes([command_id]).get(command_id)

    def outcomes(self, command_ids: Iterable[int]) -> dict[int, str | None]:
        ids = list(command_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._reading() as conn:
            found = conn.execute(
                f"SELECT id, outcome FROM commands WHERE id IN ({marks})", ids
            ).fetchall()
        return dict(found)

    def wait(self, command_id: int, timeout: float = 5.0, interval: float = 0.05) -> str | None:
        """For scripts and tests: the outcome once the bot applied the command, or None
        when ``timeout`` passed first (the bot may be down; it applies it when it returns)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.outcome(command_id)
            if found is not None or time.monotonic() >= deadline:
                return found
            time.sleep(interval)


def _last_errors(
    conn: sqlite3.Connection, changed: list[rows.Participant]
) -> dict[str, str | None]:
    """The error of each changed participant's latest turn, if that turn failed."""
    wanted = {
        (p.session_id, int(p.state.get("turns") or 0)): p.id
        for p in changed
        if p.tasks and p.state.get("turns")
    }
    errors: dict[str, str | None] = {p.id: None for p in changed}
    pairs = list(wanted)
    for start in range(0, len(pairs), 400):
        chunk = pairs[start : start + 400]
        values = ",".join("(?,?)" for _ in chunk)
        params = [x for pair in chunk for x in pair]
        for session_id, turn, error in conn.execute(
            f"SELECT session_id, turn, error FROM exchanges WHERE system_text IS NULL"
            f" AND error IS NOT NULL AND (session_id, turn) IN (VALUES {values})",
            params,
        ).fetchall():
            errors[wanted[(session_id, turn)]] = error
    return errors
