"""What ``ozlab prolific status`` and ``approve`` do: read ozlab's payment records (the
platform ids opened with the study's secret, for matching only), ask the platform, and say
the outcome as text. No participant's platform id is ever written out: a row is named by the
platform's submission id."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.core.privacy import Privacy
from bot.core.visible_text import visible
from bot.recruitment.prolific import Prolific, Submission
from bot.recruitment.reconciling import (
    Matched,
    Ours,
    Standing,
    match,
    to_approve,
    to_reject,
)
from bot.store import Access, open_store
from bot.store.opening import Database

PLATFORM = "prolific"


async def matched(
    db: Database, submissions: Sequence[Submission], privacy: Privacy, job: str | None = None
) -> list[Matched]:
    """The platform's submissions matched with ozlab's records of the study's Prolific
    participants (or of annotation job ``job``'s annotators); each record notes its
    submission (id sealed) and status as listed."""
    store = await open_store(db, access=Access.ATTACH)
    try:
        failed = await store.failed_checks()
        ours = [
            Ours(
                privacy.unseal(r.platform_key),
                r.status,
                r.seconds / 60,
                r.row,
                failed.get(r.row, 0),
            )
            for r in await store.payments()
            if r.platform == PLATFORM and r.job == job
        ]
        rows = match(submissions, ours)
        await store.note_submissions(
            [
                (r.ours.row, privacy.seal(r.submission.id), r.submission.status)
                for r in rows
                if r.ours is not None and r.submission is not None
            ]
        )
    finally:
        await store.close()
    return rows


async def _note_approvals(db: Database, rows: Sequence[Matched]) -> None:
    store = await open_store(db, access=Access.ATTACH)
    try:
        await store.note_approvals([r.ours.row for r in rows if r.ours is not None])
    finally:
        await store.close()


def _minutes(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _line(row: Matched) -> str:
    s, o = row.submission, row.ours
    return "  ".join(
        (
            f"{visible(s.id) if s else '-':<26}",
            f"{visible(s.status) if s else '-':<16}",
            f"{o.status.value if o else '-':<12}",
            f"{_minutes(o.minutes if o else None):>7}",
            f"{_minutes(s.minutes if s else None):>8}",
            row.standing.value,
        )
    )


def _counts(rows: list[Matched]) -> list[str]:
    counted = Counter(r.standing for r in rows)
    return [f"{counted[s]:>5}  {s.value}" for s in Standing if counted[s]]


async def status(
    db: Database, study_id: str, platform: Prolific, privacy: Privacy, job: str | None = None
) -> str:
    """One table: every submission and every participant (or annotator of ``job``) ozlab
    knows, with their standing and the time taken by ozlab's clock and by the platform's."""
    rows = await matched(db, await platform.submissions(study_id), privacy, job)
    header = "  ".join(
        (
            f"{'submission':<26}",
            f"{'Prolific':<16}",
            f"{'ozlab':<12}",
            f"{'min ozlab':>7}",
            f"{'min Prolific':>8}",
            "standing",
        )
    )
    return "\n".join([header, *map(_line, rows), "", *_counts(rows)])


async def approve(
    db: Database,
    study_id: str,
    platform: Prolific,
    privacy: Privacy,
    *,
    apply: bool,
    reject: bool = False,
    job: str | None = None,
) -> str:
    """The submissions ozlab counts as completed, approved in one bulk request with ``apply``;
    with ``reject`` too, those it may reject (the study's code without an ozlab completion,
    two failed attention checks) rejected with the platform's category and a message; without
    ``apply``, only how many and what they cost."""
    rows = await matched(db, await platform.submissions(study_id), privacy, job)
    chosen, rejected = to_approve(rows), to_reject(rows)
    reward = await platform.reward_cents(study_id)
    total = len(chosen) * reward / 100
    each = f"{len(chosen)} x {reward / 100:.2f} = {total:.2f}"
    said = [f"{len(chosen)} submissions, {each} in the study's currency"]
    if rejected:
        verb = "reject" if reject else "leave alone (--reject rejects them)"
        said.append(
            f"{verb}: {len(rejected)} submitted without finishing in ozlab or failing two"
            " attention checks (ozlab prolific status lists them)"
        )
    if not chosen and not (reject and rejected):
        return (
            "nothing to approve: no submission waits for review from a participant ozlab saw finish"
        )
    if not apply:
        return "would approve " + "; ".join(said) + "\n(a dry run: run again with --yes to do it)"
    if chosen:
        await platform.bulk_approve([s.id for s in chosen])
        await _note_approvals(db, [r for r in rows if r.submission in chosen])
    if reject:
        for submission, category, message in rejected:
            await platform.reject(submission.id, category, message)
    return "approved " + "; ".join(said).replace("reject:", "rejected:")
