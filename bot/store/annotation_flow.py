"""An annotator's way through their targets, inside the writer's or the reader's
transaction: the next open target with its conversation, one rating per item (refused for a
target that is not theirs, unchanged on a double tap, locked once a seen-once target is
done), a target finished or reopened (``/back``), and everyone's progress."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from bot.core.annotation import AnnotationTarget, AnnotationTask, TranscriptExchange
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    Origin,
    RatingOutcome,
    VoteSource,
)
from bot.engine.annotating.model import (
    AnnotatorRecord,
    FinishTarget,
    RecordRating,
    RecordVotes,
    ReopenLast,
    SetPaused,
    WithdrawAnnotator,
)
from bot.engine.annotating.pairs import pair_sessions
from bot.store import reads, votes
from bot.store.annotating import TARGET_COLUMNS, bump, set_paused, stored_value, target_of
from bot.store.annotator_erasure import erase_annotator
from bot.store.applying import consume
from bot.store.model import AnnotationProgress, AnnotatorAnswer
from bot.store.sql import Sql

# --- the annotator's flow ---------------------------------------------------------------------

_OPEN = "a.done_at IS NULL AND a.released_at IS NULL"


def _task(conn: Sql, annotator_id: str, target_id: int, rnd: str) -> AnnotationTask:
    row = conn.execute(
        f"SELECT {TARGET_COLUMNS} FROM annotation_targets WHERE id = ?", (target_id,)
    ).fetchone()
    target = target_of(row)
    mine = conn.execute(
        "SELECT t.id, t.session_id, t.target, t.level, t.turn, t.position"
        " FROM annotation_assignments a JOIN annotation_targets t ON t.id = a.target_id"
        " WHERE a.annotator = ? AND a.released_at IS NULL ORDER BY t.position, t.id",
        (annotator_id,),
    ).fetchall()
    conversations = list(dict.fromkeys(session or name for _, session, name, *_ in mine))
    unit = target.session_id or target.target
    exchanges = [
        ident
        for ident, session, name, level, *_ in mine
        if (session or name) == unit and level == AnnotationLevel.EXCHANGE.value
    ]
    conversation, second, second_system, following = _material(conn, target)
    swapped = conn.execute(
        "SELECT swapped FROM annotation_assignments WHERE target_id = ? AND annotator = ?",
        (target_id, annotator_id),
    ).fetchone()
    answers = {
        str(item): stored_value(value, text)
        for item, value, text in conn.execute(
            "SELECT item_id, value, text FROM annotations WHERE target_id = ? AND annotator = ?"
            " AND round = ?",
            (target_id, annotator_id, rnd),
        )
    }
    return AnnotationTask(
        target=target,
        round=AnnotationRound(rnd),
        conversation=conversation,
        answers=answers,
        exchange_number=exchanges.index(target_id) + 1 if target_id in exchanges else 0,
        exchanges=len(exchanges),
        conversation_number=conversations.index(unit) + 1,
        conversations=len(conversations),
        next_message=following,
        second=second,
        second_system=second_system,
        swapped=swapped is not None and bool(swapped[0]),
    )


_Material = tuple[
    tuple[TranscriptExchange, ...], tuple[TranscriptExchange, ...], str | None, str | None
]


def _material(conn: Sql, target: AnnotationTarget) -> _Material:
    """What a target shows: its conversation up to the exchange (a pair's first one whole,
    in its name's order), a pair's second conversation and its system, the participant's
    next message."""
    conversation: tuple[TranscriptExchange, ...] = ()
    second: tuple[TranscriptExchange, ...] = ()
    second_system: str | None = None
    following: str | None = None
    both = pair_sessions(target.target) if target.level is AnnotationLevel.PAIR else None
    if both is not None:  # a pair: both conversations whole, in its name's order
        shown = [reads.transcript(conn, session) for session in both]
        conversation, second = (() if t is None else tuple(t.exchanges) for t in shown)
        found = conn.execute("SELECT system_id FROM sessions WHERE id = ?", (both[1],)).fetchone()
        second_system = None if found is None else str(found[0])
    elif target.session_id is not None:
        transcript = reads.transcript(conn, target.session_id)
        if transcript is not None:
            conversation = tuple(
                x for x in transcript.exchanges if target.turn is None or x.turn <= target.turn
            )
            later = [x for x in transcript.exchanges if target.turn and x.turn > target.turn]
            following = later[0].user_text if later else None
    return conversation, second, second_system, following


def judge_tasks(conn: Sql, job: str, judge: str) -> list[tuple[AnnotationTask, frozenset[str]]]:
    """Every target of the job with what it shows, in the job's order, and what the model
    judge ``judge`` answered of it already: the items it rated, or the questions of a pair
    it gave a verdict on."""
    rated: dict[int, set[str]] = {}
    for target_id, item in conn.execute(
        "SELECT target_id, item_id FROM annotations WHERE annotator = ?", (judge,)
    ):
        rated.setdefault(int(target_id), set()).add(str(item))
    voted: dict[str, set[str]] = {}
    for pair, question in conn.execute(
        "SELECT session_id, question FROM votes WHERE job = ? AND rater = ?", (job, judge)
    ):
        voted.setdefault(str(pair), set()).add(str(question))
    rows = conn.execute(
        f"SELECT id, {TARGET_COLUMNS} FROM annotation_targets WHERE job = ? ORDER BY position, id",
        (job,),
    ).fetchall()
    found = []
    for number, (ident, *row) in enumerate(rows, start=1):
        target = target_of(row)
        conversation, second, second_system, following = _material(conn, target)
        task = AnnotationTask(
            target=target,
            round=AnnotationRound.FIRST,
            conversation=conversation,
            answers={},
            exchange_number=0,
            exchanges=0,
            conversation_number=number,
            conversations=len(rows),
            next_message=following,
            second=second,
            second_system=second_system,
        )
        done = rated.get(int(ident), set()) | voted.get(target.target, set())
        found.append((task, frozenset(done)))
    return found


def next_target(conn: Sql, annotator_id: str) -> AnnotationTask | None:
    """The annotator's first open target in the job's order; None when all are done."""
    row = conn.execute(
        "SELECT a.target_id, a.round FROM annotation_assignments a"
        " JOIN annotation_targets t ON t.id = a.target_id"
        f" WHERE a.annotator = ? AND {_OPEN} ORDER BY t.position, t.id LIMIT 1",
        (annotator_id,),
    ).fetchone()
    return None if row is None else _task(conn, annotator_id, int(row[0]), str(row[1]))


def holds_target(
    conn: Sql, annotator_id: str, job: str, target: str, level: AnnotationLevel
) -> bool:
    """The target is the annotator's, open, and they are not dropped."""
    found = _assignment(conn, annotator_id, job, target, level)
    return found is not None and found[2] is None


def _assignment(
    conn: Sql, annotator_id: str, job: str, target: str, level: AnnotationLevel
) -> tuple[int, str, float | None, bool] | None:
    """(target id, round, done_at, seen once) of an assignment not released, or None; None
    too once the annotator is dropped (their open targets stay assigned until the next
    planning releases them, but are no longer theirs to rate or finish)."""
    row = conn.execute(
        "SELECT t.id, a.round, a.done_at, j.seen_once FROM annotation_assignments a"
        " JOIN annotation_targets t ON t.id = a.target_id JOIN annotation_jobs j ON j.job = t.job"
        " JOIN annotators n ON n.id = a.annotator"
        " WHERE a.annotator = ? AND t.job = ? AND t.target = ? AND t.level = ?"
        " AND a.released_at IS NULL AND n.dropped_at IS NULL",
        (annotator_id, job, target, level.value),
    ).fetchone()
    if row is None:
        return None
    return int(row[0]), str(row[1]), None if row[2] is None else float(row[2]), bool(row[3])


def record_rating(
    conn: Sql,
    annotator_id: str,
    job: str,
    target: str,
    level: AnnotationLevel,
    instrument_id: str,
    item_id: str,
    answer: tuple[int | None, str | None, str | None],
    now: float,
) -> RatingOutcome:
    """One item's rating (value, label, text) by the annotator the target is assigned to,
    while they are not dropped (refused as not assigned otherwise: the flow tells them)."""
    found = _assignment(conn, annotator_id, job, target, level)
    if found is None:
        return RatingOutcome.NOT_ASSIGNED
    target_id, rnd, done_at, _ = found
    value, label, text = answer
    before = conn.execute(
        "SELECT value, label, text FROM annotations WHERE target_id = ? AND annotator = ?"
        " AND item_id = ? AND round = ?",
        (target_id, annotator_id, item_id, rnd),
    ).fetchone()
    if before is not None and tuple(before) == (value, label, text):
        return RatingOutcome.UNCHANGED
    if done_at is not None:  # an old button: only /back (where the job allows) reopens it
        return RatingOutcome.LOCKED
    conn.execute(
        "INSERT INTO annotations (target_id, annotator, instrument_id, item_id, value, label,"
        " text, round, origin, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(target_id, annotator, item_id, round) DO UPDATE SET"
        " instrument_id = excluded.instrument_id, value = excluded.value,"
        " label = excluded.label, text = excluded.text, recorded_at = excluded.recorded_at",
        (
            target_id,
            annotator_id,
            instrument_id,
            item_id,
            value,
            label,
            text,
            rnd,
            Origin.TELEGRAM.value,
            now,
        ),
    )
    conn.execute("UPDATE annotators SET last_active_at = ? WHERE id = ?", (now, annotator_id))
    bump(conn, job)
    return RatingOutcome.RECORDED


def record_votes(conn: Sql, record: RecordVotes, now: float) -> int:
    """A finished pair's votes, under the job's study, while the pair is the annotator's
    and open; how many were kept. A pair judged again (reopened with ``/back``) has its
    earlier votes replaced: one annotator, one judgement of a pair."""
    found = _assignment(conn, record.annotator, record.job, record.target, AnnotationLevel.PAIR)
    if found is None or found[2] is not None:
        return 0
    study = conn.execute(
        "SELECT study_id FROM annotation_jobs WHERE job = ?", (record.job,)
    ).fetchone()
    conn.execute(
        "DELETE FROM votes WHERE source = ? AND job = ? AND session_id = ? AND rater = ?",
        (VoteSource.ACUTE.value, record.job, record.target, record.annotator),
    )
    return votes.record(conn, str(study[0]), record.votes, Origin.TELEGRAM, now)


def finish_target(
    conn: Sql,
    annotator_id: str,
    job: str,
    target: str,
    level: AnnotationLevel,
    now: float,
) -> bool:
    """The annotator is done with the target; False when it is not theirs or done already."""
    found = _assignment(conn, annotator_id, job, target, level)
    if found is None or found[2] is not None:
        return False
    conn.execute(
        "UPDATE annotation_assignments SET done_at = ? WHERE target_id = ? AND annotator = ?",
        (now, found[0], annotator_id),
    )
    conn.execute("UPDATE annotators SET last_active_at = ? WHERE id = ?", (now, annotator_id))
    bump(conn, job)
    return True


def reopen_last(conn: Sql, annotator_id: str, now: float) -> AnnotationTask | None:
    """``/back``: the target the annotator finished last, open again (where the job allows
    revisiting and no adjudication started from it); None otherwise."""
    row = conn.execute(
        "SELECT a.target_id, a.round, j.seen_once, t.job FROM annotation_assignments a"
        " JOIN annotation_targets t ON t.id = a.target_id JOIN annotation_jobs j ON j.job = t.job"
        " WHERE a.annotator = ? AND a.done_at IS NOT NULL AND a.released_at IS NULL"
        " ORDER BY a.done_at DESC, t.position DESC LIMIT 1",
        (annotator_id,),
    ).fetchone()
    if row is None or row[2]:
        return None
    target_id, rnd, _, job = row
    adjudicated = conn.execute(
        "SELECT 1 FROM annotation_assignments WHERE target_id = ? AND round = ?",
        (target_id, AnnotationRound.ADJUDICATION.value),
    ).fetchone()
    if adjudicated is not None and rnd == AnnotationRound.FIRST.value:
        return None
    conn.execute(
        "UPDATE annotation_assignments SET done_at = NULL WHERE target_id = ? AND annotator = ?",
        (target_id, annotator_id),
    )
    conn.execute("UPDATE annotators SET last_active_at = ? WHERE id = ?", (now, annotator_id))
    bump(conn, str(job))
    return _task(conn, annotator_id, int(target_id), str(rnd))


def progress(conn: Sql) -> list[AnnotationProgress]:
    rows = conn.execute(
        "SELECT n.job, n.id, n.joined_at, n.paused, n.dropped_at, n.last_active_at,"
        " coalesce(t.session_id, t.target), a.done_at"
        " FROM annotators n LEFT JOIN annotation_assignments a"
        "  ON a.annotator = n.id AND a.released_at IS NULL"
        " LEFT JOIN annotation_targets t ON t.id = a.target_id"
        " ORDER BY n.job, n.created_at, n.id"
    ).fetchall()
    found: dict[tuple[str, str], dict[str, object]] = {}
    units: dict[tuple[str, str], dict[str, bool]] = {}
    for job, ident, joined, paused, dropped, active, unit, done in rows:
        key = (str(job), str(ident))
        entry = found.setdefault(
            key,
            {
                "assigned": 0,
                "done": 0,
                "joined": joined is not None,
                "paused": bool(paused),
                "dropped": dropped is not None,
                "active": active,
            },
        )
        if unit is None:
            continue
        entry["assigned"] = int(str(entry["assigned"])) + 1
        entry["done"] = int(str(entry["done"])) + (done is not None)
        mine = units.setdefault(key, {})
        mine[str(unit)] = mine.get(str(unit), True) and done is not None
    imported: dict[tuple[str, str], int] = {}
    for job, ident, rated in conn.execute(
        "SELECT t.job, r.annotator, COUNT(DISTINCT r.target_id)"
        " FROM annotations r JOIN annotation_targets t ON t.id = r.target_id"
        " WHERE r.origin = ? AND r.round = ? GROUP BY t.job, r.annotator"
        " ORDER BY t.job, r.annotator",
        (Origin.IMPORT.value, AnnotationRound.FIRST.value),
    ).fetchall():
        imported[(str(job), str(ident))] = int(rated)
        found.setdefault(  # an annotator known from another job, rated in this one by file
            (str(job), str(ident)),
            {
                "assigned": 0,
                "done": 0,
                "joined": False,
                "paused": False,
                "dropped": False,
                "active": None,
            },
        )
    return [
        AnnotationProgress(
            job=job,
            annotator=ident,
            assigned=int(str(entry["assigned"])),
            done=int(str(entry["done"])),
            conversations=len(units.get((job, ident), {})),
            conversations_done=sum(units.get((job, ident), {}).values()),
            joined=bool(entry["joined"]),
            paused=bool(entry["paused"]),
            dropped=bool(entry["dropped"]),
            last_active_at=None if entry["active"] is None else float(str(entry["active"])),
            imported=imported.get((job, ident), 0),
        )
        for (job, ident), entry in found.items()
    ]


# --- one step of an annotator, with the update it consumed ------------------------------------


def commit_step(
    conn: Sql,
    records: Sequence[AnnotatorRecord],
    update_id: int | None,
    now: float,
) -> list[AnnotatorAnswer]:
    """An annotator's records in order, then the update consumed, in one transaction. A
    rating refused as not theirs ends the records there (its answer is the last one); the
    update is consumed all the same: the flow tells them instead."""
    answers: list[AnnotatorAnswer] = []
    for record in records:
        match record:
            case RecordRating():
                answer = (record.value, record.label, record.text)
                outcome = record_rating(
                    conn,
                    record.annotator,
                    record.job,
                    record.target,
                    record.level,
                    record.instrument_id,
                    record.item_id,
                    answer,
                    now,
                )
                answers.append(outcome)
                if outcome is RatingOutcome.NOT_ASSIGNED:
                    break
            case RecordVotes():
                answers.append(record_votes(conn, record, now))
            case SetPaused(annotator=annotator, paused=paused):
                answers.append(set_paused(conn, annotator, paused, now))
            case FinishTarget(annotator=annotator, job=job, target=target, level=level):
                answers.append(finish_target(conn, annotator, job, target, level, now))
            case ReopenLast(annotator=annotator):
                answers.append(reopen_last(conn, annotator, now))
            case WithdrawAnnotator(annotator=annotator):
                answers.append(erase_annotator(conn, annotator, now=now))
            case _:
                assert_never(record)
    if update_id is not None:
        consume(conn, update_id, now)
    return answers
