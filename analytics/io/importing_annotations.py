"""``ozlab import annotations FILE.csv --instrument ID_OR_PATH``: ratings made outside
Telegram (a spreadsheet, ELAN exports) added to the study database, reported like the
ratings annotators make in Telegram.

Columns: ``target`` (a session id: the whole conversation; a session id with ``#TURN``:
one exchange; any other id: material from outside the study), ``annotator`` (a code such
as A1, never a name), ``item`` (the instrument's item id, with or without its
``instrument.`` prefix) and ``value`` (or ``label``); optionally ``level`` (exchange or
session), ``round`` (first or adjudication) and ``recorded_at`` (Unix seconds or ISO 8601).
Any other column is refused: a misspelt column would otherwise be silently lost.

Every row is checked first (the value against the instrument, as answers are; a target
that looks like a session id must exist, and so must its exchange; neither the annotator nor
the target's participant may be in the erasure ledger), every problem told with its line;
then all is written in one transaction, or nothing. A target is keyed by job, target and level,
and keeps its session's system and scenario: ratings of the same id in two systems are never
pooled, and one annotator's ratings of several targets are never duplicates of each other.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

from analytics.io.import_rows import (
    Problem,
    checked_answer,
    csv_file,
    erased,
    kept_out,
    not_a_pseudonym,
)
from analytics.io.importing import on_store
from bot.core.annotation import AnnotatableSession, AnnotationJobRecord, AnnotationTarget
from bot.core.vocabulary import AnnotationLevel, AnnotationRound
from bot.store.interface import AnnotationPlanning, Imports, OperatorTasks, StudyDefinitions
from bot.store.model import ImportedRating
from questionnaires.models import Questionnaire
from scenarios.models import StudyBundle
from scenarios.stored import read_definitions

__all__ = ["RatingsResult", "import_annotations"]

DEFAULT_JOB = "imported"
_REQUIRED = ("target", "annotator", "item")
_OPTIONAL = ("value", "label", "level", "round", "recorded_at")
_EXCHANGE = re.compile(r"^(?P<session>.+)#(?P<turn>[0-9]+)$")
_TELEGRAM_SESSION = re.compile(r"^p[0-9a-f]{15}-[0-9]+$")


@dataclass(frozen=True)
class RatingsResult:
    job: str
    ratings: int
    targets: int
    annotators: int
    new_annotators: int
    problems: tuple[Problem, ...]


def import_annotations(
    file: Path | str,
    db: Path | str,
    *,
    instrument: str,
    job: str | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> RatingsResult:
    """Check every row of ``file`` against ``instrument`` and, when all are right, add
    them to ``db`` at once."""
    file = Path(file)
    raw = file.read_bytes()
    return on_store(
        db, None, clock, lambda store, now: _run(store, raw, instrument, job, dry_run, now)
    )


def _failed(job: str, line: int, message: str) -> RatingsResult:
    return RatingsResult(job, 0, 0, 0, 0, (Problem(line, message),))


class RatingsStore(Imports, AnnotationPlanning, StudyDefinitions, OperatorTasks, Protocol):
    """The roles an import of ratings uses: the import, the jobs and sessions its targets
    are checked against, and the studies that name the jobs."""


async def _run(
    store: RatingsStore, raw: bytes, ref: str, job_name: str | None, dry_run: bool, now: float
) -> RatingsResult:
    name = job_name or DEFAULT_JOB
    stored = read_definitions(await store.latest_definitions())
    bundles = [definition.bundle() for definition in stored.values()]
    questionnaire, problem = _instrument(ref, bundles)
    if questionnaire is None:
        return _failed(name, 0, problem)
    record, levels, problem = await _job(store, name, questionnaire, bundles)
    if record is None:
        return _failed(name, 0, problem)
    reader = csv_file(raw)
    if isinstance(reader, str):
        return _failed(name, 0, reader)
    header = list(reader.fieldnames or [])
    missing = [c for c in _REQUIRED if c not in header]
    if missing or not {"value", "label"} & set(header):
        wanted = ", ".join(missing) or "value or label"
        return _failed(name, 1, f"missing column(s): {wanted} (columns: {', '.join(header)})")
    unknown = [h for h in header if h not in (*_REQUIRED, *_OPTIONAL)]
    if unknown:
        allowed = ", ".join((*_REQUIRED, *_OPTIONAL))
        return _failed(name, 1, f"unknown column(s): {', '.join(unknown)} (allowed: {allowed})")
    sessions = {s.session_id: s for s in await store.annotatable_sessions()}
    checker = _Rows(record.job, questionnaire, levels, sessions, now)
    ledger = await erased(store)
    problems: list[Problem] = []
    ratings: list[ImportedRating] = []
    first: dict[tuple[object, ...], int] = {}
    line = 1
    for row in reader:
        start, line = line + 1, reader.line_num
        if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue
        refused = kept_out(ledger, row, "annotator", "target")
        if refused is not None:
            problems.append(Problem(start, refused))
            continue
        found, rating = checker.check(row, start)
        if rating is not None:
            key = (rating.target.key, rating.annotator, rating.item_id, rating.round)
            if key in first:
                found.append(f"the same rating is already on line {first[key]} of this file")
            first.setdefault(key, start)
        problems += [Problem(start, message) for message in found]
        if rating is not None and not found:
            ratings.append(rating)
    if not ratings and not problems:
        problems.append(Problem(0, "the file has no ratings"))
    if problems:
        return RatingsResult(name, 0, 0, 0, 0, tuple(problems))
    outcome = await store.import_annotations(record, ratings, dry_run=dry_run)
    if outcome.erased:
        gone = "annotator: erased (the erasure ledger names them): never imported again"
        return RatingsResult(name, 0, 0, 0, 0, tuple(Problem(n, gone) for n in outcome.erased))
    if outcome.duplicates:
        lines = [Problem(n, "this rating is already in the database") for n in outcome.duplicates]
        return RatingsResult(name, 0, 0, 0, 0, tuple(lines))
    if outcome.written and _imported(record) and questionnaire.id not in _instruments(record):
        # A job imported into before, now with another instrument: keep its scales too.
        await store.save_annotation_job(
            replace(record, definition=_with_instrument(record.definition, questionnaire))
        )
    return RatingsResult(
        name, outcome.ratings, outcome.targets, outcome.annotators, outcome.new_annotators, ()
    )


def _instrument(ref: str, bundles: list[StudyBundle]) -> tuple[Questionnaire | None, str]:
    """The instrument by path, by id in a stored study, or by id in the shipped library."""
    from scenarios.loading import StudyError, load_questionnaire

    path: Path | None = Path(ref) if ref.endswith((".yaml", ".yml")) or "/" in ref else None
    if path is None:
        for bundle in bundles:
            if ref in bundle.questionnaires:
                return bundle.questionnaires[ref], ""
        shipped = files("questionnaires") / "library" / f"{ref}.yaml"
        if not shipped.is_file():
            return None, f"no instrument {ref!r}: give a questionnaire id or its YAML file"
        path = Path(str(shipped))
    try:
        return load_questionnaire(path), ""
    except StudyError as error:
        return None, f"the instrument cannot be loaded: {error.problems[0]}"
    except OSError as error:
        return None, f"the instrument cannot be loaded: {error}"


async def _job(
    store: AnnotationPlanning, name: str, questionnaire: Questionnaire, bundles: list[StudyBundle]
) -> tuple[AnnotationJobRecord | None, tuple[AnnotationLevel, ...], str]:
    """The job the ratings join (a study's job, one stored already, or a new one), and the
    levels the instrument is used at in it (none known: told by each target). An imported
    job keeps the instruments its ratings were checked against (the report reads their
    scales from it); a study's job has them in the study."""
    instrument = questionnaire.id
    for bundle in bundles:
        job = bundle.jobs.get(name)
        if job is None:
            continue
        levels = tuple(
            level
            for level, ids in ((AnnotationLevel.EXCHANGE, job.rate.exchange),
                               (AnnotationLevel.SESSION, job.rate.session))
            if instrument in ids
        )  # fmt: skip
        if not levels:
            used = ", ".join(job.instruments())
            return None, (), f"annotation job {name!r} does not rate with {instrument!r} ({used})"
        record = AnnotationJobRecord(
            name, bundle.study.id, job.model_dump_json(by_alias=True), job.seen_once_in_order,
            job.drop_out_after,
        )  # fmt: skip
        return record, levels, ""
    stored = {j.job: j for j in await store.annotation_jobs()}
    if name in stored:
        return stored[name], (), ""
    study = bundles[0].study.id if len(bundles) == 1 else ""
    return AnnotationJobRecord(name, study, _with_instrument("{}", questionnaire), False), (), ""


def _imported(record: AnnotationJobRecord) -> bool:
    try:
        found = json.loads(record.definition)
    except ValueError:
        return False
    return isinstance(found, dict) and found.get("imported") is True


def _instruments(record: AnnotationJobRecord) -> set[str]:
    found = json.loads(record.definition)
    kept = found.get("instruments") if isinstance(found, dict) else None
    return set(kept) if isinstance(kept, dict) else set()


def _with_instrument(definition: str, questionnaire: Questionnaire) -> str:
    """An imported job's definition with ``questionnaire`` among its instruments."""
    try:
        found = json.loads(definition)
    except ValueError:
        found = {}
    found = found if isinstance(found, dict) else {}
    earlier = found.get("instruments")
    kept: dict[str, Any] = dict(earlier) if isinstance(earlier, dict) else {}
    kept[questionnaire.id] = questionnaire.model_dump(mode="json", by_alias=True)
    return json.dumps({**found, "imported": True, "instruments": kept}, sort_keys=True)


class _Rows:
    """Checks rows one by one against the instrument and the stored sessions."""

    def __init__(
        self,
        job: str,
        questionnaire: Questionnaire,
        levels: tuple[AnnotationLevel, ...],
        sessions: Mapping[str, AnnotatableSession],
        now: float,
    ) -> None:
        self.job, self.questionnaire, self.levels = job, questionnaire, levels
        self.sessions, self.now = sessions, now
        self.items = {item.id: item for item in questionnaire.items}
        self.positions: dict[tuple[str, AnnotationLevel], int] = {}

    def check(self, row: dict[str, Any], line: int) -> tuple[list[str], ImportedRating | None]:
        def get(name: str) -> str:
            return (row.get(name) or "").strip()

        empty = [f"{n} is empty" for n in _REQUIRED if not get(n)]
        if empty:
            return empty, None
        who = get("annotator")
        problem = not_a_pseudonym("annotator", who, "A1")
        if problem:
            return [problem], None
        item_id = get("item")
        item = self.items.get(item_id) or self.items.get(f"{self.questionnaire.id}.{item_id}")
        if item is None:
            listed = ", ".join(self.items)
            return [
                f"instrument {self.questionnaire.id!r} has no item {item_id!r} ({listed})"
            ], None
        answer, problem = checked_answer(item, get("value"), get("label"), "")
        if problem:
            return [f"{item.id}: {problem}"], None
        value, label, text, _ = answer
        target, problem = self._target(get("target"), get("level"))
        if target is None:
            return [problem], None
        round_text = get("round") or AnnotationRound.FIRST.value
        if round_text not in {r.value for r in AnnotationRound}:
            return [f"round {round_text!r} is not first or adjudication"], None
        at, problem = _moment(get("recorded_at"))
        if problem:
            return [problem], None
        return [], ImportedRating(
            line=line, target=target, annotator=who, instrument_id=self.questionnaire.id,
            item_id=item.id, value=value, label=label, text=text,
            round=AnnotationRound(round_text), recorded_at=at,
        )  # fmt: skip

    def _target(self, name: str, level_text: str) -> tuple[AnnotationTarget | None, str]:
        level: AnnotationLevel | None = None
        if level_text:
            if level_text not in {lv.value for lv in AnnotationLevel}:
                return None, f"level {level_text!r} is not exchange or session"
            level = AnnotationLevel(level_text)
        session_id, turn = name, None
        exchange = _EXCHANGE.match(name)
        if exchange:
            session_id, turn = exchange["session"], int(exchange["turn"])
        stored = self.sessions.get(session_id)
        if exchange and stored is None:
            return None, f"target {name!r}: no session {session_id!r} in this database"
        if stored is None and _TELEGRAM_SESSION.match(name):
            return None, f"target {name!r} looks like a session id, but no such session is stored"
        if stored is not None and turn is not None and turn not in stored.turns:
            turns = ", ".join(map(str, stored.turns)) or "none"
            return None, f"target {name!r}: session {session_id!r} has no exchange {turn} ({turns})"
        if level is None:
            if len(self.levels) == 1:
                level = self.levels[0]
            else:
                whole = stored is not None and turn is None
                level = AnnotationLevel.SESSION if whole else AnnotationLevel.EXCHANGE
        if self.levels and level not in self.levels:
            return (
                None,
                f"the job rates {self.questionnaire.id!r} at the {self.levels[0].value} level",
            )
        if stored is not None and (level is AnnotationLevel.SESSION) != (turn is None):
            what = "a whole session" if level is AnnotationLevel.SESSION else "one exchange"
            return (
                None,
                f"target {name!r} is not {what}: SESSION is a session, SESSION#TURN an exchange",
            )
        key = (name, level)
        position = self.positions.setdefault(key, len(self.positions))
        return AnnotationTarget(
            job=self.job, target=name, level=level, position=position,
            session_id=None if stored is None else stored.session_id, turn=turn,
            system=None if stored is None else stored.system,
            scenario=None if stored is None else stored.scenario,
        ), ""  # fmt: skip


def _moment(raw: str) -> tuple[float | None, str | None]:
    if not raw:
        return None, None
    try:
        return float(raw), None
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp(), None
    except ValueError:
        return None, f"recorded_at {raw!r} is neither Unix seconds nor ISO 8601"
