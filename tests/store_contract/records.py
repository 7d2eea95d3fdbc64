"""Rows the contract modules write to reach a role: steps of made-up participants, answers
from outside, annotation jobs with their targets."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bot.core.annotation import AnnotationJobRecord, AnnotationTarget, AssignmentPlan
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    AnnotatorClaim,
    AnswerStatus,
    Consent,
    Moment,
    SessionState,
    Stage,
)
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import ImportedAnswer, StepCommit

EXCHANGE, SESSION = AnnotationLevel.EXCHANGE, AnnotationLevel.SESSION
FIRST, ADJUDICATION = AnnotationRound.FIRST, AnnotationRound.ADJUDICATION


def step(participant: str, *records: fx.Record, **fields: object) -> StepCommit:
    status = fields.pop("status", ParticipantStatus(Stage.DIALOGUE, 1.0))
    assert status is None or isinstance(status, ParticipantStatus)
    return StepCommit(
        "s",
        participant,
        str(fields.pop("state", "{}")),
        status,
        "k",
        records,
        **fields,  # type: ignore[arg-type]
    )


def session(participant: str = "p") -> list[fx.Record]:
    return [
        fx.RecordConsent(Consent.ACCEPTED),
        fx.OpenSession(f"{participant}-1", "task", "sys", 0, "random", "1"),
    ]


def answer(line: int, person: str, item: str, **fields: object) -> ImportedAnswer:
    return ImportedAnswer(
        line, person, "q", item, AnswerStatus.ANSWERED, Moment.POST_STUDY, f"form:{item}",
        10.0, 12.0, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def rows_of(columns: Any) -> list[tuple[object, ...]]:
    """An Arrow table of a snapshot as rows of Python values."""
    return list(zip(*(column.to_pylist() for column in columns.columns), strict=True))


def rows_into(found: dict[str, list[tuple[object, ...]]]) -> Callable[[str, Any], None]:
    """A snapshot sink keeping each table's rows in ``found`` (a table without rows: no key)."""

    def sink(table: str, columns: Any) -> None:
        if rows := rows_of(columns):
            found.setdefault(table, []).extend(rows)

    return sink


async def tables(store: StudyStore) -> dict[str, list[tuple[object, ...]]]:
    chunks: dict[str, list[tuple[object, ...]]] = {}
    await store.read_snapshot(rows_into(chunks))
    return chunks


def job(name: str = "hri", *, seen_once: bool = True) -> AnnotationJobRecord:
    return AnnotationJobRecord(name, "s", json.dumps({"id": name}), seen_once, 3600.0)


async def conversation(store: StudyStore, participant: str = "p", turns: int = 3) -> str:
    """An ended session of ``participant`` with ``turns`` answered exchanges."""
    sid = f"{participant}-1"
    records: list[fx.Record] = list(session(participant))
    for turn in range(1, turns + 1):
        records += [
            fx.RecordUserTurn(sid, turn, f"user {turn}"),
            fx.RecordSystemTurn(sid, turn, f"system {turn}", 5.0),
        ]
    records.append(fx.SetSessionState(sid, SessionState.ENDED))
    await store.commit_step(step(participant, *records))
    return sid


def targets_of(name: str, sid: str, turns: int, start: int = 0) -> list[AnnotationTarget]:
    found = [
        AnnotationTarget(name, f"{sid}#{t}", EXCHANGE, start + t - 1, sid, t, "sys", "task")
        for t in range(1, turns + 1)
    ]
    return [*found, AnnotationTarget(name, sid, SESSION, start + turns, sid, None, "sys", "task")]


async def ready(store: StudyStore, name: str = "hri", *, seen_once: bool = True) -> str:
    """A job with one conversation of three exchanges, and annotators A-1 (joined), A-2."""
    sid = await conversation(store)
    await store.save_annotation_job(job(name, seen_once=seen_once))
    assert await store.add_annotation_targets(name, targets_of(name, sid, 3)) == 4
    assert await store.add_annotators(name, [("A-1", "ann-ONE"), ("A-2", "ann-TWO")]) == [
        "A-1",
        "A-2",
    ]
    claim, _ = await store.claim_annotator("ann-ONE", "hash-1", "sealed-1")
    assert claim is AnnotatorClaim.JOINED
    return sid


async def give(store: StudyStore, name: str, *assigned: tuple[str, AnnotationLevel, str]) -> None:
    state = await store.annotation_state(name)
    assert state is not None
    plan = AssignmentPlan(assign=tuple((t, lv, who, FIRST) for t, lv, who in assigned))
    assert await store.apply_assignment_plan(name, plan, state.version)
