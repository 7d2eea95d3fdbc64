"""When the bot plans an annotation job again on its clock: just after the first silent
annotator holding open targets drops out (``bot.engine.annotating.assignment.next_drop_out``),
so that their targets go to someone else even when nobody finishes anything meanwhile.

Only what the bot knows is exact: work it assigned itself moves a job's deadline forward at
once; work assigned from outside (``ozlab invite --annotators`` while the bot runs) is seen
at the next look at the store, every ``RECHECK`` seconds at the latest."""

from __future__ import annotations

import math
from collections.abc import Mapping

from scenarios.jobs import AnnotationJob

RECHECK = 300.0


class DropOutWatch:
    """Per job with a drop-out deadline: when to plan it next (the first tick: at once)."""

    def __init__(self, jobs: Mapping[str, AnnotationJob]) -> None:
        self._after = {
            job_id: job.drop_out_after
            for job_id, job in jobs.items()
            if job.drop_out_after is not None
        }
        self._next = dict.fromkeys(self._after, -math.inf)

    def due(self, now: float) -> list[str]:
        """The jobs to plan again now."""
        return [job for job, at in self._next.items() if at < now]

    def planned(self, job: str, now: float, deadline: float | None) -> None:
        """The job was planned at ``now``; ``deadline``: its next drop-out (None: none)."""
        if job in self._next:
            soonest = math.inf if deadline is None else max(deadline, now)
            self._next[job] = min(now + RECHECK, soonest)

    def assigned(self, job: str, now: float) -> None:
        """Work given at ``now``: whoever got it and stays silent drops out after the job's
        deadline, not sooner."""
        if job in self._next:
            self._next[job] = min(self._next[job], now + self._after[job])
