"""The questionnaires after the last task, about the study as a whole."""

from __future__ import annotations

from bot.core.vocabulary import Moment
from bot.engine import events as ev
from bot.engine import questionnaire
from bot.engine.common import Phase, Result, Transition, over
from bot.engine.context import Context
from bot.engine.journey import Journey
from scenarios.models import StudyBundle

TRANSITIONS = (Transition(Phase.POST_STUDY, Phase.POST_STUDY, "answer / RecordResponse"),)


def _after(journey: Journey, _ineligible: bool) -> Result:
    return journey, over(Phase.POST_STUDY)


def enter(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    instruments = bundle.study.post_study
    return questionnaire.begin(bundle, journey, Moment.POST_STUDY, instruments, None, now, _after)


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    return questionnaire.on_event(ctx.bundle, journey, event, now, _after)
