"""``ozlab import responses FILE.csv``: answers collected outside Telegram (paper forms,
another survey tool) added to the study database, so that they join the same report.

The file is the export's long format: one answer per row, with ``participant_id``,
``questionnaire_id``, ``item_id`` and ``value``, ``label`` or ``text``; optionally
``session_id``, ``system_id``, ``scope``, ``status``, ``turn``, ``stimulus_id``,
``shown_at`` and ``answered_at`` (Unix seconds). Other columns (the export's ``score``,
``moment``, ISO times, …) are ignored. Every row is checked against the stored study
definition (the item exists, the answer is on its scale) and every problem is reported
with its line number; then everything is written through the store in one transaction,
or nothing is.

Imported answers are stored with their origin (import), their moment and the system they
rate (for answers that have no Telegram session), as columns; an event records each
import (file name, SHA-256, counts). New participants get the pseudonym given in the
file, which must look like one (letters and digits, at least one digit: ``P017``), never a
name, and are stored as imported: the bot never resumes them. A row of someone erased (their
pseudonym, or a session of theirs, in the erasure ledger) is refused, one line each. A cell
the export neutralised for spreadsheets (``'=…``) is read back as it was written (``=…``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from analytics.io.import_rows import (
    Problem,
    RowChecker,
    csv_file,
    erased,
    kept_out,
    not_a_pseudonym,
)
from bot.core.researcher_files import restored
from bot.store import open_store
from bot.store.blocking import run_blocking
from bot.store.definition import definition_json
from bot.store.interface import Imports, OperatorTasks, StudyDefinitions, StudyStore
from bot.store.model import ImportedAnswer
from bot.store.opening import locate
from scenarios.models import StudyBundle
from scenarios.stored import read_definitions

__all__ = ["ImportResult", "Problem", "import_responses"]

_ALIASES = {
    "participant": "participant_id",
    "questionnaire": "questionnaire_id",
    "item": "item_id",
    "session": "session_id",
    "system": "system_id",
}
_REQUIRED = ("participant_id", "questionnaire_id", "item_id")


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
    file = Path(file)
    raw = file.read_bytes()
    return on_store(
        db, study, clock, lambda store, now: _run(store, file, raw, study, dry_run, now)
    )


class ImportingStore(Imports, StudyDefinitions, OperatorTasks, Protocol):
    """The roles an import of answers uses: the import, and the study it is checked against."""


T = TypeVar("T")


def on_store(
    db: Path | str,
    study: str | None,
    clock: Callable[[], float],
    work: Callable[[StudyStore, float], Awaitable[T]],
) -> T:
    """``work`` on the store of ``db`` (on a server, the study's own), given the time it
    starts; the store closed after, whatever happened. Every import runs this way."""

    async def run() -> T:
        store = await open_store(db, clock, study=_kept_under(db, study))
        try:
            return await work(store, clock())
        finally:
            await store.close()

    return run_blocking(run)


def _kept_under(db: Path | str, study: str | None) -> str | None:
    """The study a server's database keeps the answers under (its own schema): ``--study``
    as given, or the id of the study file it names. A SQLite file is one study's."""
    if study is None or locate(db).server is None:
        return None
    if Path(study).suffix.lower() not in (".yaml", ".yml"):
        return study
    from scenarios.loading import load_study

    return load_study(study).study.id


async def _run(
    store: ImportingStore, file: Path, raw: bytes, study: str | None, dry_run: bool, now: float
) -> ImportResult:
    bundle, loaded, problem = await _study(store, study)
    if bundle is None:
        return ImportResult(None, 0, 0, 0, (Problem(0, problem),))
    study_id = bundle.study.id
    reader = csv_file(raw, _ALIASES)
    if isinstance(reader, str):
        return ImportResult(study_id, 0, 0, 0, (Problem(0, reader),))
    header = list(reader.fieldnames or [])
    missing = [c for c in _REQUIRED if c not in header]
    if missing or not {"value", "label", "text"} & set(header):
        wanted = ", ".join(missing) or "value, label or text"
        return ImportResult(study_id, 0, 0, 0, (Problem(1, f"missing column(s): {wanted}"),))
    context = await store.import_context(study_id)
    ledger = await erased(store)
    checker = RowChecker(bundle, dict(context.sessions), now)
    people = dict(context.participants)
    problems: list[Problem] = []
    answers: list[ImportedAnswer] = []
    new: dict[str, int] = {}
    first: dict[tuple[str, str, str, str], int] = {}
    line = 1
    for read in reader:
        start, line = line + 1, reader.line_num
        record = {k: restored(v) if isinstance(v, str) else v for k, v in read.items()}
        if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
            continue
        refused = kept_out(ledger, record, "participant_id", "session_id")
        if refused is not None:
            problems.append(Problem(start, refused))
            continue
        found, answer = checker.check(record, start)
        person = answer.participant_id if answer else (record.get("participant_id") or "").strip()
        found += _participant(person, people, study_id, new, start)
        if answer is not None and not found:
            key = (answer.participant_id, answer.scope, answer.questionnaire_id, answer.item_id)
            if key in first:
                found.append(f"the same answer is already on line {first[key]} of this file")
            first.setdefault(key, start)
        problems += [Problem(start, message) for message in found]
        if answer is not None and not found:
            answers.append(answer)
    if not answers and not problems:
        problems.append(Problem(0, "the file has no answers"))
    if problems:
        return ImportResult(study_id, 0, 0, 0, tuple(problems), checker.notes())
    source = {"file": file.name, "sha256": hashlib.sha256(raw).hexdigest()}
    outcome = await store.import_answers(study_id, answers, source, dry_run=dry_run)
    if outcome.duplicates:
        duplicates = [
            Problem(n, "this answer is already in the database") for n in outcome.duplicates
        ]
        return ImportResult(study_id, 0, 0, 0, tuple(duplicates), checker.notes())
    if loaded and not dry_run:
        await store.record_definition(study_id, definition_json(bundle))
    return ImportResult(
        study_id, outcome.answers, outcome.participants, outcome.new_participants, (),
        checker.notes(),
    )  # fmt: skip


def _participant(
    person: str, people: dict[str, str], study_id: str, new: dict[str, int], line: int
) -> list[str]:
    if not person:
        return []
    if person in people:
        if people[person] != study_id:
            return [f"participant {person!r} belongs to study {people[person]!r}"]
        return []
    problem = not_a_pseudonym("participant", person, "P017")
    if problem:
        return [problem]
    new.setdefault(person, line)
    return []


async def _study(
    store: StudyDefinitions, study: str | None
) -> tuple[StudyBundle | None, bool, str]:
    """The stored definition to check against; a shipped study or YAML file named with
    ``--study`` is stored too (once the answers are) when the database has none of that id.
    Returns the study, whether it was loaded from a file, and the problem when none."""
    stored = read_definitions(await store.latest_definitions())
    if study in stored or (study is None and len(stored) == 1):
        chosen = study or next(iter(stored))
        return stored[chosen].bundle(), False, ""
    if study is None:
        if stored:
            listed = ", ".join(stored)
            return None, False, f"this database holds several studies ({listed}): --study ID"
        return (
            None,
            False,
            (
                "this database has no study definition: name the study with --study "
                "(a shipped study's name such as hmd, or its YAML file)"
            ),
        )
    from scenarios.loading import StudyError, load_study

    try:
        bundle = load_study(study)
    except StudyError as error:  # its first problem says where (file:line: field)
        message = f"no study {study!r} in this database, and it cannot be loaded: "
        return None, False, message + str(error.problems[0])
    except OSError as error:
        message = f"no study {study!r} in this database, and it cannot be loaded: {error}"
        return None, False, message
    return bundle, True, ""
