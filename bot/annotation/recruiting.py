"""Which annotation job a platform command is about: ``ozlab prolific … --job JOB``, or the
Prolific study id of a job that recruits there. The job is read as the database stores it
(the bot stored it when its first annotator came), so the command pays by the rule the
annotators were recruited under.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.errors import StudyDataError
from bot.recruitment.prolific_commands import recruiting_jobs
from bot.store.interface import AnnotationPlanning
from scenarios.jobs import JobRecruitment


@dataclass(frozen=True)
class PlatformStudy:
    """The platform study a command asks about, and the job whose annotators it pays (None:
    the study's participants)."""

    study_id: str
    job: str | None = None
    recruitment: JobRecruitment | None = None


async def platform_study(
    store: AnnotationPlanning, job: str | None, study_id: str | None
) -> PlatformStudy:
    """The job named, or the one recruiting in the platform study ``study_id``; else the
    participants of ``study_id``. A one-line refusal when they do not fit."""
    recruiting = await recruiting_jobs(store)
    if job is None:
        if study_id is None:
            raise StudyDataError("give --study-id (the study's id on Prolific) or --job JOB")
        found = [name for name, r in recruiting.items() if r.study_id == study_id]
        if found:
            return PlatformStudy(study_id, found[0], recruiting[found[0]])
        return PlatformStudy(study_id)
    recruitment = recruiting.get(job)
    if recruitment is None:
        listed = ", ".join(sorted(recruiting)) or "none"
        raise StudyDataError(
            f"this database holds no annotation job {job!r} recruiting on a platform (those"
            f" that do: {listed}; a job is stored when its first annotator comes)"
        )
    if study_id is not None and study_id != recruitment.study_id:
        raise StudyDataError(
            f"annotation job {job!r} recruits in the Prolific study {recruitment.study_id},"
            f" not {study_id}: give one of them"
        )
    return PlatformStudy(recruitment.study_id, job, recruitment)
