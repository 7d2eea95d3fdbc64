"""Annotators recruited on a platform, inside the writer's or the reader's transaction: the
job's link makes a new annotator of whoever opens it (their platform id sealed in a payment
record of the job, beside the participants' records), or binds the id to the chat's
annotator of the job who has none yet. The rules are the participants': an annotator keeps
the first id bound to them (another one is refused, never written over), and one id is one
annotator of a job (the same id from a second Telegram account is refused: one share, one
payment). The record's status follows the annotator's part (``set_payment_status``); erasing
the annotator leaves it unlinked and withdrawn (the trigger of migration 19).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.annotation import Annotator
from bot.core.errors import StoreError
from bot.core.vocabulary import AnnotatorClaim, Origin, PaymentStatus
from bot.store.annotating import annotator, bump, require_job
from bot.store.model import PlatformArrival
from bot.store.sql import Sql


def join_from_platform(
    conn: Sql, arrival: PlatformArrival, pseudonyms: Sequence[str], now: float
) -> tuple[AnnotatorClaim, Annotator | None]:
    """The job's link opened: JOINED (a new annotator, the first free of ``pseudonyms``),
    RETURNING (the chat's annotator: the same id, or bound now), OTHER_ID (the chat's
    annotator came with another id: refused), TAKEN (another chat's annotator holds the
    id), DROPPED (the chat's annotator was dropped)."""
    require_job(conn, arrival.job)
    mine = conn.execute(
        "SELECT id, dropped_at FROM annotators WHERE job = ? AND chat_hash = ?",
        (arrival.job, arrival.chat_hash),
    ).fetchone()
    holder = conn.execute(
        "SELECT annotator FROM payments WHERE job = ? AND platform_tag = ?",
        (arrival.job, arrival.platform_tag),
    ).fetchone()
    if mine is not None:
        ident = str(mine[0])
        if mine[1] is not None:
            return AnnotatorClaim.DROPPED, None
        bound = conn.execute(
            "SELECT platform_tag FROM payments WHERE annotator = ?", (ident,)
        ).fetchone()
        if bound is not None and bound[0] != arrival.platform_tag:
            return AnnotatorClaim.OTHER_ID, None
        if bound is None and holder is not None:
            return AnnotatorClaim.TAKEN, None
        if bound is None:  # invited with a code, and now through the platform: bound
            joined = conn.execute(
                "SELECT coalesce(joined_at, created_at) FROM annotators WHERE id = ?", (ident,)
            ).fetchone()
            _record(conn, arrival, ident, float(joined[0]), now)
        conn.execute(
            "UPDATE annotators SET chat_key = coalesce(?, chat_key), last_active_at = ?"
            " WHERE id = ?",
            (arrival.chat_key, now, ident),
        )
        return AnnotatorClaim.RETURNING, annotator(conn, ident)
    if holder is not None:
        return AnnotatorClaim.TAKEN, None
    taken = {
        str(row[0])
        for row in conn.execute(
            f"SELECT id FROM annotators WHERE id IN ({','.join('?' * len(pseudonyms))})",
            tuple(pseudonyms),
        )
    }
    free = next((p for p in pseudonyms if p not in taken), None)
    if free is None:
        raise StoreError(f"every pseudonym drawn for a newcomer of job {arrival.job!r} is taken")
    conn.execute(
        "INSERT INTO annotators (id, job, origin, chat_hash, chat_key, created_at, joined_at,"
        " last_active_at) VALUES (?,?,?,?,?,?,?,?)",
        (
            free,
            arrival.job,
            Origin.TELEGRAM.value,
            arrival.chat_hash,
            arrival.chat_key,
            now,
            now,
            now,
        ),
    )
    _record(conn, arrival, free, now, now)
    bump(conn, arrival.job)
    return AnnotatorClaim.JOINED, annotator(conn, free)


def _record(conn: Sql, arrival: PlatformArrival, ident: str, since: float, now: float) -> None:
    conn.execute(
        "INSERT INTO payments (study_id, platform, platform_key, arrived_at, last_at, status,"
        " job, annotator, platform_tag) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            arrival.study_id,
            arrival.platform,
            arrival.platform_key,
            since,
            max(since, now),
            PaymentStatus.STARTED.value,
            arrival.job,
            ident,
            arrival.platform_tag,
        ),
    )


def set_payment_status(
    conn: Sql, annotator_id: str, status: PaymentStatus, now: float
) -> PaymentStatus | None:
    """How the annotator's part stands now: STARTED (still at work: the time given grows),
    or how it ended (their share rated, their onboarding failed, dropped); an ended part
    is not reopened, and a completed one stays completed. The record's status after it
    (None: the annotator has no payment record)."""
    if status is PaymentStatus.STARTED:
        conn.execute(
            "UPDATE payments SET last_at = ? WHERE annotator = ? AND status = ? AND last_at < ?",
            (now, annotator_id, status.value, now),
        )
    else:
        conn.execute(
            "UPDATE payments SET status = ?, last_at = ? WHERE annotator = ? AND status IN (?,?)",
            (
                status.value,
                now,
                annotator_id,
                PaymentStatus.STARTED.value,
                PaymentStatus.TIMED_OUT.value,
            ),
        )
    row = conn.execute(
        "SELECT status FROM payments WHERE annotator = ?", (annotator_id,)
    ).fetchone()
    return None if row is None else PaymentStatus(row[0])


def targets_rated(conn: Sql, job: str) -> dict[int, int]:
    """Per payments row of the job's annotators, the targets their annotator finished."""
    return {
        int(row): int(count)
        for row, count in conn.execute(
            "SELECT p.id, COUNT(a.done_at) FROM payments p JOIN annotation_assignments a"
            " ON a.annotator = p.annotator WHERE p.job = ? GROUP BY p.id",
            (job,),
        )
    }
