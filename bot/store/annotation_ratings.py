"""Ratings as analytics reads them, ratings imported from a file (all or none), and the
stored sessions targets are built from; inside the writer's or the reader's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from bot.core.annotation import AnnotatableSession, AnnotationJobRecord
from bot.core.vocabulary import Origin, SessionState
from bot.store.annotating import (
    add_annotators,
    add_targets,
    bump,
    save_job,
    stored_value,
    target_id_of,
)
from bot.store.annotator_erasure import erased_pseudonyms
from bot.store.model import AnnotationRating, ImportedRating, RatingsImported
from bot.store.sql import Queries, Sql, has_table


def has_annotations(conn: Queries) -> bool:
    return has_table(conn, "annotations")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat()


# --- analytics and imports --------------------------------------------------------------------


def ratings(conn: Queries) -> list[AnnotationRating]:
    """Every rating, but those of a target given to someone else before it was finished
    (the annotator dropped out: their partial ratings would add a rater); none from a file
    of an ozlab before annotations (read-only analytics opens older files as they are)."""
    if not has_annotations(conn):
        return []
    return [
        AnnotationRating(
            job=str(job),
            level=str(level),
            target=str(target),
            session_id=None if session is None else str(session),
            turn=None if turn is None else int(turn),
            system=None if system is None else str(system),
            scenario=None if scenario is None else str(scenario),
            annotator=str(who),
            instrument_id=str(instrument),
            item_id=str(item),
            value=stored_value(value, text),
            round=str(rnd),
            origin=str(origin),
            recorded_at=_iso(float(at)),
        )
        for (
            job,
            level,
            target,
            session,
            turn,
            system,
            scenario,
            who,
            instrument,
            item,
            value,
            text,
            rnd,
            origin,
            at,
        ) in conn.execute(
            "SELECT t.job, t.level, t.target, t.session_id, t.turn, t.system_id, t.scenario_id,"
            " r.annotator, r.instrument_id, r.item_id, r.value, r.text, r.round, r.origin,"
            " r.recorded_at FROM annotations r JOIN annotation_targets t ON t.id = r.target_id"
            " LEFT JOIN annotation_assignments a"
            "  ON a.target_id = r.target_id AND a.annotator = r.annotator"
            " WHERE a.released_at IS NULL"  # imported ratings have no assignment
            " ORDER BY t.job, t.position, t.id, r.round, r.annotator, r.item_id"
        )
    ]


def import_ratings(
    conn: Sql,
    job: AnnotationJobRecord,
    imported: Sequence[ImportedRating],
    now: float,
    *,
    dry_run: bool,
    origin: Origin = Origin.IMPORT,
) -> RatingsImported:
    """Ratings from a file, all or none: the job, its targets and annotators are added as
    needed (an annotator known already, from this job or another, is the same person); a
    rating stored already, or by an annotator the erasure ledger names, makes the whole
    import refused (its lines said)."""
    gone = erased_pseudonyms(conn, list({r.annotator for r in imported}))
    if gone:
        lines = tuple(r.line for r in imported if r.annotator in gone)
        raters = len({r.annotator for r in imported})
        return RatingsImported(False, len(imported), 0, raters, 0, erased=lines)
    conn.execute("SAVEPOINT import_ratings")
    try:
        known = conn.execute("SELECT 1 FROM annotation_jobs WHERE job = ?", (job.job,)).fetchone()
        if known is None:
            save_job(conn, job, now)
        add_targets(conn, job.job, list({r.target.key: r.target for r in imported}.values()))
        people = list(dict.fromkeys(r.annotator for r in imported))
        new = add_annotators(conn, job.job, [(p, None) for p in people], origin, now)
        duplicates: list[int] = []
        for r in imported:
            target_id = target_id_of(conn, job.job, r.target.target, r.target.level)
            cursor = conn.execute(
                "INSERT INTO annotations (target_id, annotator, instrument_id,"
                " item_id, value, label, text, round, origin, recorded_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (
                    target_id,
                    r.annotator,
                    r.instrument_id,
                    r.item_id,
                    r.value,
                    r.label,
                    r.text,
                    r.round.value,
                    origin.value,
                    now if r.recorded_at is None else r.recorded_at,
                ),
            )
            if not cursor.rowcount:
                duplicates.append(r.line)
        bump(conn, job.job)
        outcome = RatingsImported(
            written=not dry_run and not duplicates,
            ratings=len(imported),
            targets=len({r.target.key for r in imported}),
            annotators=len(people),
            new_annotators=len(new),
            duplicates=tuple(duplicates),
        )
    except BaseException:
        conn.execute("ROLLBACK TO import_ratings")
        conn.execute("RELEASE import_ratings")
        raise
    if outcome.written:
        conn.execute("RELEASE import_ratings")
    else:
        conn.execute("ROLLBACK TO import_ratings")
        conn.execute("RELEASE import_ratings")
    return outcome


def annotatable_sessions(conn: Sql) -> list[AnnotatableSession]:
    """Every session with the turns the system answered, in the order they started: what
    a job's targets are built from."""
    turns: dict[str, list[int]] = {}
    for session, turn in conn.execute(
        "SELECT session_id, turn FROM exchanges WHERE system_text IS NOT NULL ORDER BY turn"
    ):
        turns.setdefault(str(session), []).append(int(turn))
    return [
        AnnotatableSession(
            session_id=str(ident),
            study_id=str(study),
            system=str(system),
            scenario=str(scenario),
            state=SessionState(state),
            turns=tuple(turns.get(str(ident), ())),
        )
        for ident, study, system, scenario, state in conn.execute(
            "SELECT id, study_id, system_id, scenario_id, state FROM sessions"
            " ORDER BY started_at, id"
        )
    ]
