"""An annotator's share of a job recruiting on a platform (``targets_per_annotator``): at
most so many targets each, and their part done once they rated that many. Pure.

The planner (``assignment.plan``) balances the load and keeps a conversation with its
annotators; the share is laid over it from outside. An annotator who holds their share is
not offered to the planner as someone to give work to (one who dropped out still is: the
planner releases their open targets); a plan that would give someone more than the room
they have left is cut to it, and the job planned again, so that what was cut goes to
someone with room.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from bot.core.annotation import AnnotationState, AssignmentPlan
from bot.engine.annotating.assignment import Rules, out_of_work
from scenarios.jobs import AnnotationJob


def share_of(job: AnnotationJob) -> int | None:
    """Targets per annotator (None: as many as the assignment gives them)."""
    return None if job.recruitment is None else job.recruitment.targets_per_annotator


def _held(state: AnnotationState) -> Counter[str]:
    return Counter(a.annotator for a in state.assignments)


def open_to_work(
    state: AnnotationState, share: int | None, rules: Rules, now: float
) -> AnnotationState:
    """The state as the planner is to see it: annotators who hold their share are left out,
    unless they dropped out (their open targets are released to others)."""
    if share is None:
        return state
    held = _held(state)
    open_since: dict[str, float] = {}
    for a in state.assignments:
        if a.done_at is None:
            open_since[a.annotator] = min(open_since.get(a.annotator, a.assigned_at), a.assigned_at)
    offered = tuple(
        a
        for a in state.annotators
        if held[a.annotator_id] < share
        or out_of_work(a, open_since.get(a.annotator_id), rules, now)
    )
    return replace(state, annotators=offered)


def within_shares(
    decided: AssignmentPlan, state: AnnotationState, share: int | None
) -> tuple[AssignmentPlan, bool]:
    """The plan with each annotator's new targets cut to the room their share leaves, in the
    plan's order; whether anything was cut."""
    if share is None:
        return decided, False
    room = Counter({who: share for who in {a.annotator_id for a in state.annotators}})
    room.subtract(_held(state))
    room.update(who for *_, who in decided.release)
    kept = []
    for assigned in decided.assign:
        who = assigned[2]
        if room[who] > 0:
            room[who] -= 1
            kept.append(assigned)
    cut = len(kept) < len(decided.assign)
    return replace(decided, assign=tuple(kept)), cut


def share_done(state: AnnotationState, annotator: str, share: int | None) -> bool:
    """The annotator rated their share: as many targets as it says, or (no share) every
    target given to them, at least one, with none left open."""
    mine = [a for a in state.assignments if a.annotator == annotator]
    done = sum(1 for a in mine if a.done_at is not None)
    if share is not None:
        return done >= share
    return done > 0 and done == len(mine)
