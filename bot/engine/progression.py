"""The study's progression, declared once: which phase follows which.

consent → screening → assignment → for each task: (dialogue or rating) → post-task
questionnaires → post-study questionnaires → closing. A phase never starts another: it
ends with ``PhaseOver`` and ``after`` enters the next one, so the phase modules do not
import each other. ``TRANSITIONS`` is the same sequence as data: the flow diagram
(``flow.mmd``) is generated from it and the phases' own declarations (``diagram.py``).
"""

from __future__ import annotations

from bot.core.vocabulary import EventKind
from bot.engine import effects as fx
from bot.engine.common import Doing, Phase, PhaseOver, Result, Transition, texts_of
from bot.engine.context import Context
from bot.engine.journey import Journey
from bot.engine.phases import (
    assignment,
    closing,
    dialogue,
    post_study,
    post_task,
    rating,
    screening,
)

TRANSITIONS = (
    Transition("[*]", Phase.CONSENT, "/start [invite code valid]"),
    Transition(Phase.CONSENT, Phase.SCREENING, "I agree [study has screening]"),
    Transition(Phase.CONSENT, Phase.ASSIGNMENT, "I agree / RecordConsent(accepted)"),
    Transition(Phase.SCREENING, Phase.ASSIGNMENT, "eligible"),
    Transition(Phase.SCREENING, Phase.CLOSING, "eligible_if fails / released, its code"),
    Transition(Phase.ASSIGNMENT, Phase.DIALOGUE, "tasks assigned / OpenSession, brief"),
    Transition(Phase.ASSIGNMENT, Phase.RATING, "tasks assigned [kind rating]"),
    Transition(Phase.DIALOGUE, Phase.POST_TASK, "task over / CloseSession"),
    Transition(Phase.RATING, Phase.POST_TASK, "last row / CloseSession(completed)"),
    Transition(
        Phase.POST_TASK,
        Phase.DIALOGUE,
        "last item [more tasks] / system_changed [another system], OpenSession",
    ),
    Transition(Phase.POST_TASK, Phase.RATING, "last item [more tasks, kind rating]"),
    Transition(Phase.POST_TASK, Phase.POST_STUDY, "last item [post-study instruments]"),
    Transition(Phase.POST_TASK, Phase.CLOSING, "last item / thanks, completion code"),
    Transition(Phase.POST_STUDY, Phase.CLOSING, "last item / thanks, completion code"),
    Transition(Phase.CLOSING, "[*]"),
)


def after(ctx: Context, journey: Journey, ended: PhaseOver, now: float) -> Result:
    """Enter the phase that follows ``ended``."""
    bundle = ctx.bundle
    match ended.phase:
        case Phase.CONSENT:
            if bundle.study.screening:
                return screening.enter(bundle, journey, now)
            return assignment.enter(ctx, journey, now)
        case Phase.SCREENING:
            if ended.ineligible:
                return closing.release(bundle, journey)
            return assignment.enter(ctx, journey, now)
        case Phase.ASSIGNMENT:
            return _task(ctx, journey, journey.task_index, now)
        case Phase.DIALOGUE | Phase.RATING:
            return post_task.enter(bundle, journey, now)
        case Phase.POST_TASK:
            if journey.task_index + 1 < len(journey.tasks):
                return _next_task(ctx, journey, now)
            if bundle.study.post_study:
                return post_study.enter(bundle, journey, now)
            return closing.finish(bundle, journey)
        case Phase.POST_STUDY:
            return closing.finish(bundle, journey)
        case Phase.CLOSING:
            return journey, []


def _task(ctx: Context, journey: Journey, index: int, now: float) -> Result:
    scenario = ctx.bundle.scenario(journey.tasks[index].scenario_id)
    if scenario.kind == "rating":
        return rating.enter(ctx.bundle, journey, index, now)
    return dialogue.enter(ctx.bundle, journey, index, now)


def _next_task(ctx: Context, journey: Journey, now: float) -> Result:
    """The next task; where its system is another than the last task's, the participant
    is told first that the assistant has changed (the last system's buttons and held
    reply went with its task)."""
    before = journey.task.system_id
    new, effects = _task(ctx, journey, journey.task_index + 1, now)
    if new.task.system_id == before:
        return new, effects
    texts = texts_of(ctx.bundle, new)
    data = {"from": before, "to": new.task.system_id}
    told: list[Doing] = [
        fx.RecordEvent(EventKind.SYSTEM_CHANGED, new.session_id, data),
        fx.Send(texts.system_changed),
    ]
    opened = [e for e in effects if isinstance(e, fx.OpenSession)]
    rest = [e for e in effects if not isinstance(e, fx.OpenSession)]
    return new, [*opened, *told, *rest]
