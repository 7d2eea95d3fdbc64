"""An annotation job brought up to date in the store: its definition, its targets from the
sessions stored so far, and who rates what (``bot.engine.annotating.assignment`` plans, the
store applies the plan only if nothing changed meanwhile; else it is planned again).

Run when annotators are invited (``ozlab invite --annotators``), and by the annotators' flow
whenever a target is finished or, on the bot's clock, someone drops out: adjudication and
reassignment follow.
"""

from __future__ import annotations

from bot.core.annotation import AnnotationJobRecord, AnnotationState, AssignmentPlan
from bot.core.errors import StudyDataError
from bot.engine.annotating.assignment import (
    forced_choices,
    item_kinds,
    next_drop_out,
    onboarding_result,
    plan,
    rules_of,
)
from bot.engine.annotating.pairs import adaptive_counts
from bot.engine.annotating.shares import open_to_work, share_done, share_of, within_shares
from bot.engine.annotating.targets import build_targets
from bot.store.interface import AnnotationPlanning
from scenarios.jobs import AnnotationJob
from scenarios.models import StudyBundle

_ATTEMPTS = 20


def job_of(bundle: StudyBundle, name: str) -> AnnotationJob:
    """The study's job ``name``, or a one-line error listing the study's jobs."""
    job = bundle.jobs.get(name)
    if job is None:
        listed = ", ".join(bundle.jobs) or "none: add annotation_jobs to the study"
        raise StudyDataError(
            f"study {bundle.study.id!r} has no annotation job {name!r} (its jobs: {listed})"
        )
    return job


def job_record(bundle: StudyBundle, job: AnnotationJob) -> AnnotationJobRecord:
    return AnnotationJobRecord(
        job=job.id,
        study_id=bundle.study.id,
        definition=job.model_dump_json(by_alias=True),
        seen_once=job.seen_once_in_order,
        drop_out_after=job.drop_out_after,
    )


async def prepare_job(store: AnnotationPlanning, bundle: StudyBundle, job: AnnotationJob) -> int:
    """Store the job and the targets of sessions ended since it was last prepared; how many
    targets are new. An adaptive pairwise job's next pairs follow the votes so far."""
    await store.save_annotation_job(job_record(bundle, job))
    existing = await store.annotation_targets(job.id)
    sessions = await store.annotatable_sessions()
    votes = pending = None
    if job.kind == "pairwise" and job.pairing.selection == "adaptive":
        state = await store.annotation_state(job.id)
        if state is not None:
            done = [a.target for a in state.assignments if a.done_at is not None]
            question = _first_question(bundle, job)
            votes, pending = adaptive_counts(
                question, state.targets, done, state.first_ratings, sessions
            )
    new = build_targets(job, bundle.study.id, sessions, existing, votes, pending)
    return await store.add_annotation_targets(job.id, new) if new else 0


def _first_question(bundle: StudyBundle, job: AnnotationJob) -> tuple[str, int | str] | None:
    """The job's first forced choice, and the value that picks the first conversation."""
    choices = forced_choices(bundle.questionnaires[q] for q in job.rate.pair)
    first = next(iter(choices.items()), None)
    return None if first is None else (first[0], first[1][0])


async def unqualified(
    store: AnnotationPlanning, bundle: StudyBundle, job: AnnotationJob, annotator: str
) -> bool:
    """The annotator finished a pairwise job's onboarding pairs below its threshold."""
    if job.kind != "pairwise" or job.pairing.onboarding is None:
        return False
    state = await store.annotation_state(job.id)
    if state is None:
        return False
    instruments = [bundle.questionnaires[q] for q in job.instruments()]
    done = [
        a.target for a in state.assignments if a.annotator == annotator and a.done_at is not None
    ]
    result = onboarding_result(
        annotator, state.targets, done, state.first_ratings, rules_of(job, instruments)
    )
    return result.finished and not result.passed


async def share_rated(store: AnnotationPlanning, job: AnnotationJob, annotator: str) -> bool:
    """The annotator rated their share of the job (``shares.share_done``)."""
    state = await store.annotation_state(job.id)
    return state is not None and share_done(state, annotator, share_of(job))


async def assign(
    store: AnnotationPlanning, bundle: StudyBundle, job: AnnotationJob, now: float
) -> AssignmentPlan:
    """Plan and apply who rates what; the plan that was applied (empty: nothing to do). An
    adaptive pairwise job first draws its next pairs from the votes so far."""
    if job.kind == "pairwise" and job.pairing.selection == "adaptive":
        await prepare_job(store, bundle, job)
    decided, _ = await _assigned(store, bundle, job, now)
    return decided


async def assign_on_the_clock(
    store: AnnotationPlanning, bundle: StudyBundle, job: AnnotationJob, now: float
) -> tuple[AssignmentPlan, float | None]:
    """``assign``, and when the job's next silent annotator drops out after it (None: nobody
    can): from the state the plan was made from when there was nothing to do (the usual
    case, one read), else from the state read again."""
    decided, state = await _assigned(store, bundle, job, now)
    if decided.assign or decided.release:
        state = await store.annotation_state(job.id) or state
    return decided, next_drop_out(state, rules_of(job), now)


async def _assigned(
    store: AnnotationPlanning, bundle: StudyBundle, job: AnnotationJob, now: float
) -> tuple[AssignmentPlan, AnnotationState]:
    """Plan and apply until nothing is left to do; what was applied in all. A plan cut to
    the annotators' shares is followed by another, for what was cut (each cut fills
    someone's share, so these end); a plan refused as made from a stale state counts
    towards the attempts."""
    instruments = [bundle.questionnaires[q] for q in job.instruments()]
    rules = rules_of(job, instruments)
    kinds = item_kinds(instruments)
    share = share_of(job)
    applied = AssignmentPlan()
    stale = 0
    while stale < _ATTEMPTS:
        state = await store.annotation_state(job.id)
        if state is None:
            raise StudyDataError(f"annotation job {job.id!r} is not in this database yet")
        decided = plan(open_to_work(state, share, rules, now), rules, kinds, now)
        decided, cut = within_shares(decided, state, share)
        if not decided.assign and not decided.release:
            return applied, state
        if await store.apply_assignment_plan(job.id, decided, state.version):
            applied = AssignmentPlan(
                applied.assign + decided.assign, applied.release + decided.release
            )
            if not cut:
                return applied, state
        else:
            stale += 1
    raise StudyDataError(f"annotation job {job.id!r} kept changing while it was planned")
