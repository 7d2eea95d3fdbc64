"""What ``ozlab prolific status`` and ``approve`` do: read ozlab's payment records (the
platform ids opened with the study's secret, for matching only), ask the platform, and say
the outcome as text. No participant's platform id is ever written out: a row is named by the
platform's submission id."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from bot.core.privacy import Privacy
from bot.core.visible_text import visible
from bot.core.vocabulary import PaymentStatus
from bot.engine.assignment import progress
from bot.engine.recruitment import code_for
from bot.recruitment.prolific import Prolific, Submission
from bot.recruitment.reconciling import (
    Matched,
    Ours,
    Standing,
    code_notes,
    match,
    to_approve,
    to_ask_return,
    to_reject,
)
from bot.store import Access, open_store
from bot.store.interface import AnnotationPlanning
from bot.store.model import LiveParticipant, PaymentRecord
from bot.store.opening import Database
from scenarios.jobs import AnnotationJob, JobRecruitment
from scenarios.models import Study
from scenarios.stored import UnreadableDefinition, read_definition

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
        recruiting = {
            study_id: study.recruitment
            for study_id, study in _studies(await store.latest_definitions()).items()
            if study.recruitment is not None
        }
        jobs = await recruiting_jobs(store)

        def code(r: PaymentRecord) -> str | None:
            if r.job is not None:
                return job_code_for(jobs[r.job], r.status) if r.job in jobs else None
            return code_for(recruiting[r.study_id], r.status) if r.study_id in recruiting else None

        ours = [
            Ours(
                privacy.unseal(r.platform_key),
                r.status,
                r.seconds / 60,
                r.row,
                failed.get(r.row, 0),
                code(r),
            )
            for r in await store.payments()
            if r.platform == PLATFORM and r.job == job
        ]
        if job is None:
            completing = frozenset(r.completion_code for r in recruiting.values())
        else:
            completing = frozenset([jobs[job].completion_code] if job in jobs else [])
        rows = match(submissions, ours, completing)
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


async def recruiting_jobs(store: AnnotationPlanning) -> dict[str, JobRecruitment]:
    """Each job the database stores that recruits on a platform, with its recruitment."""
    recruiting = {}
    for record in await store.annotation_jobs():
        try:
            stored = AnnotationJob.model_validate_json(record.definition)
        except ValidationError:  # a job of an older file that no longer loads recruits nobody
            continue
        if stored.recruitment is not None:
            recruiting[stored.id] = stored.recruitment
    return recruiting


def job_code_for(recruitment: JobRecruitment, status: PaymentStatus) -> str | None:
    """The code a recruiting job gives an annotator for how their part ended (None: none)."""
    match status:
        case PaymentStatus.COMPLETED:
            return recruitment.completion_code
        case PaymentStatus.SCREENED_OUT:
            return recruitment.onboarding_failed_code
        case _:
            return None


def _studies(definitions: Mapping[str, str]) -> dict[str, Study]:
    """Each stored study, where this ozlab can read its definition."""
    found: dict[str, Study] = {}
    for study_id, raw in definitions.items():
        with contextlib.suppress(UnreadableDefinition):
            found[study_id] = read_definition(study_id, raw).bundle().study
    return found


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


def _quota_lines(
    studies: Mapping[str, Study], participants: Sequence[LiveParticipant]
) -> list[str]:
    """Each cell of the design of a study with a quota: completed of the quota, and under
    way (nothing for a study without one)."""
    lines: list[str] = []
    for study_id, study in studies.items():
        if study.design.quota is None:
            continue
        statuses = (p.status for p in participants if p.study_id == study_id)
        lines += [f"{visible(study_id)}, quota of the design's cells:"]
        lines += [f"  {visible(str(cell))}" for cell in progress(study, statuses)]
    return lines


async def _participants_lines(db: Database, study_id: str, platform: Prolific) -> list[str]:
    """Under a quota, each cell of the design's progress; then what the Prolific study does
    with the codes the study file gives."""
    store = await open_store(db, access=Access.ATTACH)
    try:
        studies = _studies(await store.latest_definitions())
        participants = await store.live_participants()
    finally:
        await store.close()
    codes = await platform.completion_codes(study_id)
    notes = [
        f"{visible(s.id)}: {note}"
        for s in studies.values()
        if s.recruitment is not None
        for note in code_notes(s.recruitment, codes)
    ]
    return [
        line
        for part in (_quota_lines(studies, participants), notes)
        if part
        for line in ["", *part]
    ]


async def status(
    db: Database, study_id: str, platform: Prolific, privacy: Privacy, job: str | None = None
) -> str:
    """One table: every submission and every participant (or annotator of ``job``) ozlab
    knows, with their standing and the time taken by ozlab's clock and by the platform's;
    then, for the participants, under a quota, each cell of the design's progress and what
    the Prolific study does with the codes the study file gives (one missing there, a
    screen-out Prolific pays by itself)."""
    rows = await matched(db, await platform.submissions(study_id), privacy, job)
    extra = [] if job is not None else await _participants_lines(db, study_id, platform)
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
    return "\n".join([header, *map(_line, rows), "", *_counts(rows), *extra])


async def approve(
    db: Database,
    study_id: str,
    platform: Prolific,
    privacy: Privacy,
    *,
    apply: bool,
    reject: bool = False,
    ask_returns: bool = False,
    job: str | None = None,
) -> str:
    """The submissions ozlab counts as completed, approved in one bulk request with ``apply``;
    with ``reject`` too, those it may reject (the study's code without an ozlab completion,
    two failed attention checks) rejected with the platform's category and a message; with
    ``ask_returns``, those of participants who left ozlab early (screened out, declined,
    timed out) and submitted anyway asked to return them; without ``apply``, only how many
    and what they cost."""
    rows = await matched(db, await platform.submissions(study_id), privacy, job)
    chosen, rejected, returning = to_approve(rows), to_reject(rows), to_ask_return(rows)
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
    if returning:
        verb = "ask" if ask_returns else "leave alone (--ask-returns asks them)"
        said.append(
            f"{verb} {len(returning)} to return: submitted without finishing in ozlab (screened"
            " out, declined, timed out, or without the study's code)"
        )
    if not chosen and not (reject and rejected) and not (ask_returns and returning):
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
    if ask_returns:
        for submission, reason in returning:
            await platform.request_return(submission.id, [reason])
    done = "; ".join(said).replace("reject:", "rejected:").replace("ask ", "asked ")
    return "approved " + done
