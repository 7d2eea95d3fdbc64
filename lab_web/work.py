"""The study's work besides its sessions, as the store keeps it: annotators' progress per
job, the model judges' runs, and the money (payments by how each part ended, submissions to
approve, bonus requests whose fate is not known yet, each design cell against the quota).
Nothing is asked of a platform here: ``ozlab prolific status`` asks Prolific itself."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bot.core.vocabulary import PaymentStatus
from bot.engine.assignment import CellProgress
from bot.store.model import AnnotationProgress, JudgeCost, MoneyStep
from lab_web.lab import Study

PLATFORMS = ("prolific",)
APPROVED_ALREADY = frozenset({"APPROVED", "REJECTED", "RETURNED", "TIMED-OUT"})
"""A submission's status on the platform after which there is nothing to approve."""


@dataclass(frozen=True)
class Money:
    by_status: list[tuple[str, str, int]]  # platform, status, participants
    to_approve: int  # completed in ozlab, not approved by ozlab nor settled on the platform
    approved: int
    unsettled: list[MoneyStep]  # requests sent whose outcome is not known
    quotas: list[CellProgress]  # each design cell against the quota (none without one)


@dataclass(frozen=True)
class Annotation:
    progress: list[AnnotationProgress]
    judges: list[JudgeCost]
    judgements: list[tuple[str, str, int]]  # judge, outcome, judgements


async def money(study: Study) -> Money:
    records = await study.store.payments()
    counted = Counter((r.platform, r.status.value) for r in records)
    to_approve = sum(
        r.status is PaymentStatus.COMPLETED
        and r.approved_at is None
        and (r.platform_status or "").upper() not in APPROVED_ALREADY
        for r in records
    )
    unsettled = [
        step
        for platform in PLATFORMS
        for step in await study.store.money_path(platform)
        if step.outcome is None
    ]
    return Money(
        by_status=sorted((p, s, n) for (p, s), n in counted.items()),
        to_approve=to_approve,
        approved=sum(r.approved_at is not None for r in records),
        unsettled=unsettled,
        quotas=await study.desk.cells(),
    )


async def annotation(study: Study) -> Annotation:
    judged = Counter((j.judge, j.outcome) for j in await study.store.judgements())
    return Annotation(
        progress=await study.store.annotation_progress(),
        judges=await study.store.judge_costs(),
        judgements=sorted((judge, outcome, n) for (judge, outcome), n in judged.items()),
    )
