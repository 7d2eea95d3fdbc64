"""Invitation codes and payment records, inside the writer's or the reader's transaction.

An invitation is used once: the first participant to start with it takes it (a
conditional update, so two at once cannot both); the same participant may come back with
it. A payment record holds a recruited participant's platform id only sealed; it follows
their last activity while they take part and keeps how their part ended. Erasing the
participant leaves it, unlinked, as ``withdrawn`` (a trigger of migration 9).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.vocabulary import Invitation, PaymentStatus
from bot.store.model import MoneyStep, PaymentRecord
from bot.store.sql import Sql


def add_invitations(conn: Sql, codes: Sequence[str], now: float) -> list[str]:
    """New codes (one already stored is left as it is); those that were new, in order."""
    added: list[str] = []
    for code in codes:
        cursor = conn.execute(
            "INSERT INTO invitations (code, created_at) VALUES (?,?) ON CONFLICT DO NOTHING",
            (code, now),
        )
        if cursor.rowcount:
            added.append(code)
    return added


def check_invitation(conn: Sql, code: str | None, participant_id: str) -> Invitation:
    """What ``code`` means for ``participant_id``; NONE_HELD when no code is stored."""
    if conn.execute("SELECT 1 FROM invitations LIMIT 1").fetchone() is None:
        return Invitation.NONE_HELD
    if not code:
        return Invitation.UNKNOWN
    row = conn.execute("SELECT used_by FROM invitations WHERE code = ?", (code,)).fetchone()
    if row is None:
        return Invitation.UNKNOWN
    if row[0] is None:
        return Invitation.FREE
    return Invitation.YOURS if row[0] == participant_id else Invitation.TAKEN


def claim(conn: Sql, code: str, participant_id: str, now: float) -> None:
    """Take a free code (a code already taken stays with whoever took it first)."""
    conn.execute(
        "UPDATE invitations SET used_by = ?, used_at = ? WHERE code = ? AND used_by IS NULL",
        (participant_id, now, code),
    )


def begin_payment(
    conn: Sql,
    study_id: str,
    participant_id: str,
    platform: str,
    platform_key: str,
    status: PaymentStatus,
    arrived_at: float,
    last_at: float,
) -> None:
    """The payment record of a participant from a platform, from the first ``/start`` that
    carried their id (a record already there is never overwritten)."""
    conn.execute(
        "INSERT INTO payments (participant_id, study_id, platform, platform_key,"
        " arrived_at, last_at, status) VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
        (participant_id, study_id, platform, platform_key, arrived_at, last_at, status.value),
    )


def set_status(conn: Sql, participant_id: str, status: PaymentStatus, now: float) -> None:
    conn.execute(
        "UPDATE payments SET status = ?, last_at = ? WHERE participant_id = ?",
        (status.value, now, participant_id),
    )


def follow_activity(conn: Sql, participant_id: str, last_activity: float) -> None:
    """Time given grows with the participant's activity while their part is open."""
    conn.execute(
        "UPDATE payments SET last_at = ? WHERE participant_id = ? AND status = ? AND last_at < ?",
        (last_activity, participant_id, PaymentStatus.STARTED.value, last_activity),
    )


def payments(conn: Sql) -> list[PaymentRecord]:
    rows = conn.execute(
        "SELECT id, study_id, platform, platform_key, status, arrived_at, last_at,"
        " submission_key, platform_status, approved_at, job FROM payments ORDER BY id"
    )
    return [
        PaymentRecord(
            study_id=str(r[1]),
            platform=str(r[2]),
            platform_key=str(r[3]),
            status=PaymentStatus(r[4]),
            arrived_at=float(r[5]),
            last_at=float(r[6]),
            row=int(r[0]),
            submission_key=r[7],
            platform_status=r[8],
            approved_at=None if r[9] is None else float(r[9]),
            job=r[10],
        )
        for r in rows
    ]


def note_submissions(conn: Sql, seen: Sequence[tuple[int, str, str]]) -> None:
    """(payments row, sealed submission id, status) as the platform listed them."""
    conn.executemany(
        "UPDATE payments SET submission_key = ?, platform_status = ? WHERE id = ?",
        [(key, status, row) for row, key, status in seen],
    )


def note_approvals(conn: Sql, rows: Sequence[int], now: float) -> None:
    conn.executemany(
        "UPDATE payments SET platform_status = 'APPROVED', approved_at = ? WHERE id = ?",
        [(now, row) for row in rows],
    )


def record_intent(
    conn: Sql,
    study_id: str,
    platform: str,
    platform_study: str,
    action: str,
    request: str,
    bulk_id: str | None,
    now: float,
) -> int:
    """A money-moving request about to be sent; its ledger id."""
    row = conn.execute(
        "INSERT INTO money_path (study_id, platform, platform_study, action, request, bulk_id,"
        " intent_at) VALUES (?,?,?,?,?,?,?) RETURNING id",
        (study_id, platform, platform_study, action, request, bulk_id, now),
    ).fetchone()
    return int(row[0])


def record_outcome(
    conn: Sql, step_id: int, outcome: str, bulk_id: str | None, answer: str, now: float
) -> None:
    """What became of a request (the platform's answer, or what it showed when asked)."""
    conn.execute(
        "UPDATE money_path SET outcome = ?, bulk_id = COALESCE(?, bulk_id), answer = ?,"
        " outcome_at = ? WHERE id = ?",
        (outcome, bulk_id, answer, now, step_id),
    )


def money_path(conn: Sql, platform: str) -> list[MoneyStep]:
    return [
        MoneyStep(int(i), str(ps), str(a), str(r), b, float(at), o, ans, oat)
        for i, ps, a, r, b, at, o, ans, oat in conn.execute(
            "SELECT id, platform_study, action, request, bulk_id, intent_at, outcome, answer,"
            " outcome_at FROM money_path WHERE platform = ? ORDER BY id",
            (platform,),
        )
    ]


def failed_checks(conn: Sql) -> dict[int, int]:
    """Per payments row, how many attention checks its participant failed."""
    return {
        int(row): int(count)
        for row, count in conn.execute(
            "SELECT p.id, COUNT(*) FROM payments p JOIN responses r"
            " ON r.participant_id = p.participant_id WHERE r.attention_ok = 0 GROUP BY p.id"
        )
    }


def tasks_done(conn: Sql) -> dict[int, tuple[int, int]]:
    """Per payments row, its participant's sessions that ended and those done successfully
    (as the scenario's ``success_if`` or a wizard judged it, else as the system reported)."""
    return {
        int(row): (int(ended or 0), int(succeeded or 0))
        for row, ended, succeeded in conn.execute(
            "SELECT p.id, SUM(CASE WHEN s.state = 'ended' THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN COALESCE(s.correct, s.success) = 1 THEN 1 ELSE 0 END)"
            " FROM payments p JOIN sessions s ON s.participant_id = p.participant_id GROUP BY p.id"
        )
    }
