"""Annotation jobs, annotators, targets and assignments, inside the writer's or the
reader's transaction (the annotations migration); the annotator's flow is in
``annotation_flow``, ratings for analytics and imports in ``annotation_ratings``.

The store enforces what must hold whoever writes: a rating only for a target assigned to
that annotator (an old button is refused), once per annotator, target, item and round (a
double tap changes nothing), never changed once the target is done (unless reopened where
the job allows revisiting); an invitation code taken by one chat only. Who is assigned
what is planned outside the store (``bot.engine.annotating.assignment``, pure) from one
``AnnotationState`` and applied here only if nothing changed since that state was read
(its ``version``).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.annotation import (
    AnnotationAssignment,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    Annotator,
    AssignmentPlan,
    FirstRating,
)
from bot.core.errors import StoreError
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    AnnotatorClaim,
    Origin,
)
from bot.store.sql import Queries, Sql

_ANNOTATOR_COLUMNS = (
    "id, job, origin, code, chat_key, joined_at, last_active_at, paused, dropped_at, simulated"
)
TARGET_COLUMNS = "job, target, level, position, session_id, turn, system_id, scenario_id"


def bump(conn: Sql, job: str) -> None:
    conn.execute("UPDATE annotation_jobs SET version = version + 1 WHERE job = ?", (job,))


def _annotator(row: Sequence[object]) -> Annotator:
    ident, job, origin, code, key, joined, active, paused, dropped, simulated = row
    return Annotator(
        annotator_id=str(ident),
        job=str(job),
        origin=Origin(str(origin)),
        code=None if code is None else str(code),
        chat_key=None if key is None else str(key),
        joined_at=None if joined is None else float(str(joined)),
        last_active_at=None if active is None else float(str(active)),
        paused=bool(paused),
        dropped=dropped is not None,
        simulated=bool(simulated),
    )


def target_of(row: Sequence[object]) -> AnnotationTarget:
    job, target, level, position, session, turn, system, scenario = row
    return AnnotationTarget(
        job=str(job),
        target=str(target),
        level=AnnotationLevel(str(level)),
        position=int(str(position)),
        session_id=None if session is None else str(session),
        turn=None if turn is None else int(str(turn)),
        system=None if system is None else str(system),
        scenario=None if scenario is None else str(scenario),
    )


def stored_value(value: object, text: object) -> str:
    """A rating's value as analytics reads it: the number, else the text."""
    if value is not None:
        return str(value)
    return "" if text is None else str(text)


# --- jobs, targets, annotators ----------------------------------------------------------------


def save_job(conn: Sql, job: AnnotationJobRecord, now: float) -> None:
    """The job as its file now says (a changed file updates it; targets stay)."""
    conn.execute(
        "INSERT INTO annotation_jobs (job, study_id, definition, seen_once, drop_out_after,"
        " created_at) VALUES (?,?,?,?,?,?) ON CONFLICT(job) DO UPDATE SET"
        " study_id = excluded.study_id, definition = excluded.definition,"
        " seen_once = excluded.seen_once, drop_out_after = excluded.drop_out_after,"
        " version = annotation_jobs.version + 1",
        (job.job, job.study_id, job.definition, int(job.seen_once), job.drop_out_after, now),
    )


def require_job(conn: Sql, job: str) -> None:
    if conn.execute("SELECT 1 FROM annotation_jobs WHERE job = ?", (job,)).fetchone() is None:
        raise StoreError(f"no annotation job {job!r} in this database")


def annotation_jobs(conn: Queries) -> list[AnnotationJobRecord]:
    return [
        AnnotationJobRecord(str(job), str(study), str(definition), bool(once), drop, int(version))
        for job, study, definition, once, drop, version in conn.execute(
            "SELECT job, study_id, definition, seen_once, drop_out_after, version"
            " FROM annotation_jobs ORDER BY created_at, job"
        )
    ]


def add_targets(conn: Sql, job: str, targets: Sequence[AnnotationTarget]) -> int:
    """Targets new to the job (one stored already is left as it is); how many."""
    require_job(conn, job)
    added = 0
    for t in targets:
        if t.job != job:
            raise StoreError(f"target {t.target!r} belongs to job {t.job!r}, not {job!r}")
        added += conn.execute(
            f"INSERT INTO annotation_targets ({TARGET_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            (
                t.job,
                t.target,
                t.level.value,
                t.position,
                t.session_id,
                t.turn,
                t.system,
                t.scenario,
            ),
        ).rowcount
    if added:
        bump(conn, job)
    return added


def targets(conn: Sql, job: str) -> list[AnnotationTarget]:
    return [
        target_of(row)
        for row in conn.execute(
            f"SELECT {TARGET_COLUMNS} FROM annotation_targets WHERE job = ? ORDER BY position, id",
            (job,),
        )
    ]


def add_annotators(
    conn: Sql,
    job: str,
    annotators: Sequence[tuple[str, str | None]],
    origin: Origin,
    now: float,
) -> list[str]:
    """Annotators (pseudonym, invitation code) new to the store; their pseudonyms."""
    require_job(conn, job)
    added: list[str] = []
    for pseudonym, code in annotators:
        taken = conn.execute(
            "SELECT 1 FROM annotators WHERE id = ? OR (CAST(? AS TEXT) IS NOT NULL AND code = ?)",
            (pseudonym, code, code),
        ).fetchone()
        if taken is not None:
            continue
        conn.execute(
            "INSERT INTO annotators (id, job, code, origin, created_at) VALUES (?,?,?,?,?)",
            (pseudonym, job, code, origin.value, now),
        )
        added.append(pseudonym)
    if added:
        bump(conn, job)
    return added


def annotators(conn: Sql, job: str | None) -> list[Annotator]:
    where, params = ("WHERE job = ?", (job,)) if job is not None else ("", ())
    return [
        _annotator(row)
        for row in conn.execute(
            f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators {where} ORDER BY created_at, id", params
        )
    ]


def claim_annotator(
    conn: Sql, code: str, chat_hash: str, chat_key: str | None, now: float
) -> tuple[AnnotatorClaim, Annotator | None]:
    """``/start ann-CODE`` from the chat ``chat_hash``: a free code becomes this chat's."""
    row = conn.execute(
        "SELECT chat_hash, dropped_at, id, job FROM annotators WHERE code = ?", (code,)
    ).fetchone()
    if row is None:
        return AnnotatorClaim.UNKNOWN, None
    holder, dropped, ident, job = row
    if dropped is not None:
        return AnnotatorClaim.DROPPED, None
    if holder is not None and holder != chat_hash:
        return AnnotatorClaim.TAKEN, None
    if holder is None:
        before = conn.execute(
            "SELECT id, dropped_at FROM annotators WHERE job = ? AND chat_hash = ?",
            (job, chat_hash),
        ).fetchone()
        if before is not None and before[1] is not None:
            return rejoin(conn, str(before[0]), str(ident), code, chat_key, now)
        if before is not None:  # already this job's annotator under their own code
            conn.execute("UPDATE annotators SET last_active_at = ? WHERE id = ?", (now, before[0]))
            return AnnotatorClaim.ALREADY, annotator(conn, str(before[0]))
    claim = AnnotatorClaim.RETURNING if holder == chat_hash else AnnotatorClaim.JOINED
    conn.execute(
        "UPDATE annotators SET chat_hash = ?, chat_key = coalesce(?, chat_key),"
        " joined_at = coalesce(joined_at, ?), last_active_at = ? WHERE id = ?",
        (chat_hash, chat_key, now, now, ident),
    )
    found = annotator(conn, str(ident))
    assert found is not None
    return claim, found


def rejoin(
    conn: Sql,
    annotator_id: str,
    unused: str,
    code: str,
    chat_key: str | None,
    now: float,
) -> tuple[AnnotatorClaim, Annotator | None]:
    """A dropped annotator's chat claims a new, unused code of the same job (the researcher
    gave them one): they are their old pseudonym again, so that one person stays one
    annotator (their finished ratings theirs, never a target rated twice by them under two
    names). The code's own pseudonym, never used, goes; its open targets move to them
    (one released from them is theirs again, with what they had rated of it), except
    those they finished (the next planning gives those to someone else)."""
    conn.execute(
        "UPDATE annotation_assignments SET released_at = NULL, assigned_at = ?"
        " WHERE annotator = ? AND released_at IS NOT NULL AND done_at IS NULL AND target_id IN"
        " (SELECT target_id FROM annotation_assignments WHERE annotator = ? AND done_at IS NULL)",
        (now, annotator_id, unused),
    )
    conn.execute(
        "UPDATE annotation_assignments SET annotator = ? WHERE annotator = ?"
        " AND done_at IS NULL AND target_id NOT IN"
        " (SELECT target_id FROM annotation_assignments WHERE annotator = ?)",
        (annotator_id, unused, annotator_id),
    )
    conn.execute("DELETE FROM annotation_assignments WHERE annotator = ?", (unused,))
    conn.execute("DELETE FROM annotators WHERE id = ?", (unused,))
    conn.execute(
        "UPDATE annotators SET code = ?, dropped_at = NULL, paused = 0,"
        " chat_key = coalesce(?, chat_key), last_active_at = ? WHERE id = ?",
        (code, chat_key, now, annotator_id),
    )
    found = annotator(conn, annotator_id)
    assert found is not None
    bump(conn, found.job)
    return AnnotatorClaim.JOINED, found


def annotator(conn: Sql, annotator_id: str) -> Annotator | None:
    row = conn.execute(
        f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators WHERE id = ?", (annotator_id,)
    ).fetchone()
    return None if row is None else _annotator(row)


def annotator_for_chat(conn: Sql, chat_hash: str) -> Annotator | None:
    """The annotator this chat is: the one it joined last, one not dropped first (a dropped
    one is known too, so that a restart does not take them for a newcomer)."""
    row = conn.execute(
        f"SELECT {_ANNOTATOR_COLUMNS} FROM annotators WHERE chat_hash = ?"
        " ORDER BY dropped_at IS NOT NULL, joined_at DESC, id DESC LIMIT 1",
        (chat_hash,),
    ).fetchone()
    return None if row is None else _annotator(row)


def set_paused(conn: Sql, annotator_id: str, paused: bool, now: float) -> bool:
    return bool(
        conn.execute(
            "UPDATE annotators SET paused = ?, last_active_at = ? WHERE id = ?",
            (int(paused), now, annotator_id),
        ).rowcount
    )


def drop_annotator(conn: Sql, annotator_id: str, now: float) -> bool:
    """Declared dropped: their open targets go to others at the next planning; their
    finished ratings stay (research data); their sealed chat id is forgotten; a payment
    record of theirs says they timed out."""
    row = conn.execute(
        "SELECT job FROM annotators WHERE id = ? AND dropped_at IS NULL", (annotator_id,)
    ).fetchone()
    if row is None:
        return False
    conn.execute(
        "UPDATE annotators SET dropped_at = ?, chat_key = NULL, paused = 0 WHERE id = ?",
        (now, annotator_id),
    )
    conn.execute(  # recruited on a platform: their part ended there as a drop-out
        "UPDATE payments SET status = 'timed_out' WHERE annotator = ? AND status = 'started'",
        (annotator_id,),
    )
    bump(conn, str(row[0]))
    return True


# --- planning ---------------------------------------------------------------------------------


def annotation_state(conn: Sql, job: str) -> AnnotationState | None:
    found = [j for j in annotation_jobs(conn) if j.job == job]
    if not found:
        return None
    assignments: list[AnnotationAssignment] = []
    swapped_before: dict[tuple[str, str], bool] = {}
    for target, level, who, rnd, at, done, released, swapped in conn.execute(
        "SELECT t.target, t.level, a.annotator, a.round, a.assigned_at, a.done_at,"
        " a.released_at, a.swapped"
        " FROM annotation_assignments a JOIN annotation_targets t ON t.id = a.target_id"
        " WHERE t.job = ? ORDER BY t.position, a.assigned_at",
        (job,),
    ):
        if released is not None:
            if level == AnnotationLevel.PAIR.value:
                swapped_before[(str(target), str(who))] = bool(swapped)
            continue
        assignments.append(
            AnnotationAssignment(
                str(target),
                AnnotationLevel(level),
                str(who),
                AnnotationRound(rnd),
                float(at),
                None if done is None else float(done),
                bool(swapped),
            )
        )
    first = tuple(
        FirstRating(
            str(target), AnnotationLevel(level), str(who), str(item), value, text, bool(swapped)
        )
        for target, level, who, item, value, text, swapped in conn.execute(
            "SELECT t.target, t.level, r.annotator, r.item_id, r.value, r.text, a.swapped"
            " FROM annotations r JOIN annotation_targets t ON t.id = r.target_id"
            " JOIN annotation_assignments a ON a.target_id = r.target_id"
            "  AND a.annotator = r.annotator"
            " WHERE t.job = ? AND r.round = ? AND a.done_at IS NOT NULL"
            " AND a.released_at IS NULL ORDER BY t.position, r.annotator, r.item_id",
            (job, AnnotationRound.FIRST.value),
        )
    )
    imported = tuple(
        (str(target), AnnotationLevel(level), str(who))
        for target, level, who in conn.execute(
            "SELECT DISTINCT t.target, t.level, r.annotator"
            " FROM annotations r JOIN annotation_targets t ON t.id = r.target_id"
            " WHERE t.job = ? AND r.round = ? AND r.origin = ?"
            " ORDER BY t.target, t.level, r.annotator",
            (job, AnnotationRound.FIRST.value, Origin.IMPORT.value),
        )
    )
    # a real pair's second conversation is the rest of its name after the first's and "~"
    pair_systems = {
        str(target): (str(first_system), str(second_system))
        for target, first_system, second_system in conn.execute(
            "SELECT t.target, t.system_id, s.system_id FROM annotation_targets t"
            " JOIN sessions s ON s.id = substr(t.target, length(t.session_id) + 2)"
            " WHERE t.job = ? AND t.level = ? AND t.system_id IS NOT NULL",
            (job, AnnotationLevel.PAIR.value),
        )
    }
    return AnnotationState(
        job=found[0],
        targets=tuple(targets(conn, job)),
        # a model judge rates beside the annotators: never given their targets
        annotators=tuple(a for a in annotators(conn, job) if a.origin is not Origin.MODEL),
        assignments=tuple(assignments),
        first_ratings=first,
        version=found[0].version,
        imported=imported,
        pair_systems=pair_systems,
        swapped_before=swapped_before,
    )


def target_id_of(conn: Sql, job: str, target: str, level: AnnotationLevel) -> int:
    row = conn.execute(
        "SELECT id FROM annotation_targets WHERE job = ? AND target = ? AND level = ?",
        (job, target, level.value),
    ).fetchone()
    if row is None:
        raise StoreError(f"no target {target!r} ({level.value}) in annotation job {job!r}")
    return int(row[0])


def apply_plan(conn: Sql, job: str, plan: AssignmentPlan, version: int, now: float) -> bool:
    """The plan, if the job is as it was when its state was read; else False (plan again)."""
    row = conn.execute("SELECT version FROM annotation_jobs WHERE job = ?", (job,)).fetchone()
    if row is None or int(row[0]) != version:
        return False
    for target, level, who in plan.release:
        conn.execute(
            "UPDATE annotation_assignments SET released_at = ? WHERE target_id = ?"
            " AND annotator = ? AND done_at IS NULL AND released_at IS NULL",
            (now, target_id_of(conn, job, target, level), who),
        )
    swapped = set(plan.swapped)
    for target, level, who, rnd in plan.assign:
        conn.execute(  # given back, an assignment keeps its side (what was rated, was on it)
            "INSERT INTO annotation_assignments (target_id, annotator, round, assigned_at,"
            " swapped) VALUES (?,?,?,?,?) ON CONFLICT(target_id, annotator) DO UPDATE SET"
            " round = excluded.round, assigned_at = excluded.assigned_at, released_at = NULL"
            " WHERE annotation_assignments.released_at IS NOT NULL",
            (
                target_id_of(conn, job, target, level),
                who,
                rnd.value,
                now,
                int((target, who) in swapped),
            ),
        )
    if plan.assign or plan.release:
        bump(conn, job)
    return True
