"""``ozlab import sessions FILE.csv``: tasks done outside Telegram (a lab session on paper,
another tool, a published dataset) added to the study as sessions, so that task success and
the models of repeated measures see them as they see the bot's.

One session per row: ``participant``, ``system``, ``scenario`` and ``success`` (true or
false) are needed; ``session`` (its id; by default ``<participant>-<task>``), ``task`` (the
participant's task number from 0; by default the order of the participant's rows),
``completed`` (false: the participant gave the task up, which counts as not successful; by
default true), ``correct`` (the task done correctly, as judged) and ``started_at`` /
``ended_at`` (Unix seconds or ISO 8601; without: the import's time) may be given; ``_id``
may end the first four names (``participant_id``). Any other column is refused: a misspelt
one would otherwise be lost.

Every row is checked against the stored study (its systems and scenarios) and every problem
told with its line; then all rows are written through the store in one transaction, or none.
The participants are new ones, each named by a pseudonym (``P017``), never a name, and stored
as imported, which the bot never resumes: a participant already in the database (one who came
through Telegram, or an earlier import) is refused, because their sessions are the bot's,
and so is one the erasure ledger names (erased: they do not come back), one line each.
Answers about the sessions follow with ``ozlab import responses`` and their ``session_id``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from analytics.io.import_rows import (
    Problem,
    csv_file,
    erased,
    kept_out,
    moment,
    not_a_pseudonym,
    whole_number,
)
from analytics.io.importing import _study, on_store
from bot.core.researcher_files import restored
from bot.core.vocabulary import Consent, EndReason, SessionState
from bot.store.definition import definition_json
from bot.store.interface import Imports, OperatorTasks, StudyDefinitions
from bot.store.model import BulkRows
from scenarios.models import StudyBundle

__all__ = ["SessionsResult", "import_sessions"]

REQUIRED = ("participant", "system", "scenario", "success")
OPTIONAL = ("session", "task", "completed", "correct", "started_at", "ended_at")
_ALIASES = {f"{name}_id": name for name in ("participant", "system", "scenario", "session")}
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")
DESIGN = "import"
"""The design column of an imported session: it was not assigned by the study's design."""


@dataclass(frozen=True)
class SessionsResult:
    study_id: str | None
    sessions: int
    participants: int
    problems: tuple[Problem, ...]


@dataclass(frozen=True)
class _Session:
    line: int
    session: str
    participant: str
    system: str
    scenario: str
    task: int | None
    success: bool
    completed: bool
    correct: bool | None
    started_at: float | None
    ended_at: float | None


def import_sessions(
    file: Path | str,
    db: Path | str,
    *,
    study: str | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> SessionsResult:
    """Check every row of ``file`` and, when all are right, add them to ``db`` at once."""
    raw = Path(file).read_bytes()
    return on_store(db, study, clock, lambda store, now: _run(store, raw, study, dry_run, now))


class SessionStore(Imports, StudyDefinitions, OperatorTasks, Protocol):
    """The roles an import of sessions uses: the study and participants it is checked
    against, and the rows."""


def _failed(study_id: str | None, line: int, message: str) -> SessionsResult:
    return SessionsResult(study_id, 0, 0, (Problem(line, message),))


async def _run(
    store: SessionStore, raw: bytes, study: str | None, dry_run: bool, now: float
) -> SessionsResult:
    bundle, loaded, problem = await _study(store, study)
    if bundle is None:
        return _failed(None, 0, problem)
    study_id = bundle.study.id
    reader = csv_file(raw, _ALIASES)
    if isinstance(reader, str):
        return _failed(study_id, 0, reader)
    header = list(reader.fieldnames or [])
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        return _failed(study_id, 1, f"missing column(s): {', '.join(missing)}")
    unknown = [h for h in header if h not in (*REQUIRED, *OPTIONAL)]
    if unknown:
        allowed = ", ".join((*REQUIRED, *OPTIONAL))
        return _failed(study_id, 1, f"unknown column(s): {', '.join(unknown)} (allowed: {allowed})")
    context = await store.import_context(study_id)
    ledger = await erased(store)
    checker = _Rows(bundle, context.participants)
    problems: list[Problem] = []
    sessions: list[_Session] = []
    line = 1
    for read in reader:
        start, line = line + 1, reader.line_num
        row = {k: restored(v) if isinstance(v, str) else "" for k, v in read.items()}
        if not any(v.strip() for v in row.values()):
            continue
        refused = kept_out(ledger, row, "participant", "session")
        if refused is not None:
            problems.append(Problem(start, refused))
            continue
        found, session = checker.check(row, start)
        problems += [Problem(start, message) for message in found]
        if session is not None and not found:
            sessions.append(session)
    if not sessions and not problems:
        problems.append(Problem(0, "the file has no sessions"))
    rows, more = _numbered(sessions, set(context.sessions), study_id, now)
    problems += more
    if problems:
        return SessionsResult(study_id, 0, 0, tuple(sorted(problems, key=lambda p: p.line)))
    people: dict[str, _Session] = {}
    for session in sessions:
        people.setdefault(session.participant, session)  # each one's first row
    if not dry_run:
        participants = [
            (p, study_id, Consent.ACCEPTED.value, _start(s, now), _start(s, now))
            for p, s in people.items()
        ]
        await store.bulk_load(BulkRows(participants=participants, sessions=rows))
        if loaded:
            await store.record_definition(study_id, definition_json(bundle))
    return SessionsResult(study_id, len(rows), len(people), ())


def _start(session: _Session, now: float) -> float:
    return now if session.started_at is None else session.started_at


def _numbered(
    sessions: list[_Session], stored: set[str], study_id: str, now: float
) -> tuple[list[tuple[object, ...]], list[Problem]]:
    """The sessions' rows, tasks numbered in file order where the file gives none; a session
    id or a participant's task given twice is a problem at its second line."""
    rows: list[tuple[object, ...]] = []
    problems: list[Problem] = []
    ids: dict[str, int] = {}
    tasks: dict[tuple[str, int], int] = {}
    counted: dict[str, int] = {}
    for s in sessions:
        task = counted.get(s.participant, 0) if s.task is None else s.task
        counted[s.participant] = max(counted.get(s.participant, 0), task + 1)
        session = s.session or f"{s.participant}-{task}"
        if session in stored:
            problems.append(Problem(s.line, f"session: {session!r} is already in the database"))
        elif session in ids:
            problems.append(
                Problem(s.line, f"session: {session!r} is already on line {ids[session]}")
            )
        ids.setdefault(session, s.line)
        if (s.participant, task) in tasks:
            where = tasks[(s.participant, task)]
            problems.append(
                Problem(s.line, f"task: {s.participant}'s task {task} is on line {where}")
            )
        tasks.setdefault((s.participant, task), s.line)
        started = _start(s, now)
        ended = started if s.ended_at is None else s.ended_at
        state = SessionState.ENDED if s.completed else SessionState.ABANDONED
        if not s.completed:
            reason = EndReason.ABANDONED
        else:
            reason = EndReason.SUCCESS if s.success else EndReason.PARTICIPANT_DONE
        correct = None if s.correct is None else int(s.correct)
        rows.append(
            (session, s.participant, study_id, s.scenario, s.system, task, DESIGN, "", state.value,
             started, ended, reason.value, int(s.success), correct)
        )  # fmt: skip
    return rows, problems


class _Rows:
    """Checks rows one by one against the study's systems and scenarios and the stored
    participants."""

    def __init__(self, bundle: StudyBundle, participants: Mapping[str, str]) -> None:
        self.participants = participants
        self.systems = {s.id for s in bundle.study.systems}
        self.scenarios = set(bundle.study.scenarios)

    def check(self, row: Mapping[str, str], line: int) -> tuple[list[str], _Session | None]:
        def get(name: str) -> str:
            return (row.get(name) or "").strip()

        empty = [f"{name}: empty" for name in REQUIRED if not get(name)]
        if empty:
            return empty, None
        problems: list[str] = []
        person = get("participant")
        if person in self.participants:
            problems.append(
                f"participant: {person!r} is already in this database: sessions are imported "
                "for new participants only (a participant's sessions from Telegram are the bot's)"
            )
        elif problem := not_a_pseudonym("participant:", person, "P017"):
            problems.append(problem)
        system, scenario = get("system"), get("scenario")
        if system not in self.systems:
            known = ", ".join(sorted(self.systems))
            problems.append(f"system: no system {system!r} in this study ({known})")
        if scenario not in self.scenarios:
            known = ", ".join(sorted(self.scenarios))
            problems.append(f"scenario: no scenario {scenario!r} in this study ({known})")
        success = _flag(get("success"), "success", problems)
        completed = True if not get("completed") else _flag(get("completed"), "completed", problems)
        correct = _flag(get("correct"), "correct", problems) if get("correct") else None
        if success and completed is False:
            problems.append(
                "completed: false, but success is true: a task given up did not succeed"
            )
        task = whole_number(get("task"), "task", problems)
        started = moment(get("started_at"), "started_at", problems)
        ended = moment(get("ended_at"), "ended_at", problems)
        if started is not None and ended is not None and ended < started:
            problems.append("ended_at: earlier than started_at")
        if problems or success is None or completed is None:
            return problems, None
        return [], _Session(
            line, get("session"), person, system, scenario, task, success, completed, correct,
            started, ended,
        )  # fmt: skip


def _flag(raw: str, name: str, problems: list[str]) -> bool | None:
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    problems.append(f"{name}: {raw!r} is neither true nor false")
    return None
