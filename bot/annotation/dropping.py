"""A researcher drops an annotator from their job (``ozlab annotators drop A-7KQ2``): they
are declared dropped (their sealed chat id forgotten, their code no longer works, the bot
tells them so), their finished ratings stay (research data; to erase them, ``ozlab erase``),
and the job is planned again at once, so that the targets they had open go back to the pool
and on to other annotators (those waiting find them with their next message)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from bot.annotation.invitations import study_bundle
from bot.annotation.jobs import assign
from bot.core.errors import StudyDataError
from bot.store.interface import AnnotationPlanning, AnnotatorWork, StudyDefinitions


class DroppingStore(AnnotationPlanning, AnnotatorWork, StudyDefinitions, Protocol):
    """The roles dropping uses: who the annotator is, the drop, and the job's plan."""


async def drop_annotators(
    store: DroppingStore,
    pseudonyms: Sequence[str],
    study: str | None = None,
    clock: Callable[[], float] = time.time,
) -> list[str]:
    """Drop each annotator and plan their job again; one line each, for the researcher."""
    known = {a.annotator_id: a for a in await store.annotators()}
    unknown = [p for p in pseudonyms if p not in known]
    if unknown:
        raise StudyDataError(f"no annotator {', '.join(unknown)} in this database")
    lines: list[str] = []
    for pseudonym in pseudonyms:
        annotator = known[pseudonym]
        if not await store.drop_annotator(pseudonym):
            lines.append(f"{pseudonym} was dropped already")
            continue
        bundle = await study_bundle(store, study)
        job = bundle.jobs.get(annotator.job)
        if job is None:  # a job only imported into: nothing is planned
            lines.append(f"dropped {pseudonym} of job {annotator.job}; their ratings stay")
            continue
        plan = await assign(store, bundle, job, clock())
        released = sum(1 for *_, who in plan.release if who == pseudonym)
        given = len(plan.assign)
        lines.append(
            f"dropped {pseudonym} of job {job.id}: {released} open targets back to the pool,"
            f" {given} assignments made now; their ratings stay"
        )
    return lines
