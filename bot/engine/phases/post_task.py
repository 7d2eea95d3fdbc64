"""The questionnaires after a task, about the session that just ended."""

from __future__ import annotations

from bot.core.vocabulary import Moment, SessionState
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import questionnaire
from bot.engine.common import Phase, Result, Transition, over, scenario_of
from bot.engine.context import Context
from bot.engine.journey import Journey
from scenarios.models import StudyBundle

TRANSITIONS = (
    Transition(
        Phase.POST_TASK,
        Phase.POST_TASK,
        "answer (button, typed number, text, Skip, options + Done) / RecordResponse",
    ),
    Transition(Phase.POST_TASK, Phase.CLOSING, "silence ≥ abandon_after [closes abandoned]"),
)


def _after(journey: Journey, _ineligible: bool) -> Result:
    ended = fx.SetSessionState(journey.session_id, SessionState.ENDED)
    return journey, [ended, *over(Phase.POST_TASK)]


def enter(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    instruments = scenario_of(bundle, journey).post_task
    session = journey.session_id
    return questionnaire.begin(bundle, journey, Moment.POST_TASK, instruments, session, now, _after)


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    return questionnaire.on_event(ctx.bundle, journey, event, now, _after)
